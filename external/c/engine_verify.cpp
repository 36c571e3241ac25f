// engine_verify.cpp: token verification in C++, served to specsim through the
// C client (specsim.h): cc -std=c99 -O2 -c specsim.c && c++ -O2
// engine_verify.cpp specsim.o -o engine_verify
#include "specsim.h"

#include <cstring>
#include <vector>

namespace {

// sample draws from unnormalised weights w by inverse CDF.
int sample(const std::vector<double> &w, double sum, specsim_rng *rng) {
    double t = specsim_random(rng) * sum, c = 0;
    int last = 0;
    for (int y = 0; y < (int)w.size(); y++) {
        if (w[y] <= 0) continue;
        c += w[y];
        last = y;
        if (c > t) return y;
    }
    return last;
}

int verify(const specsim_batch *bt, specsim_reply *r, void *) {
    const int V = bt->vocab, G = bt->gamma;
    std::vector<double> w(V);
    for (int b = 0; b < bt->size; b++) {
        specsim_rng *rng = specsim_row_rng(bt, b);
        int64_t *out = r->emitted + (size_t)b * (G + 1);
        int g = specsim_row_gamma(bt, b), i = 0;
        for (; i < g; i++) {
            int x = (int)specsim_draft(bt, b, i);
            const float *p = specsim_p(bt, b, i), *q = specsim_q(bt, b, i);
            if (specsim_random(rng) * q[x] < p[x]) { out[i] = x; continue; }
            double sum = 0;
            for (int y = 0; y < V; y++) sum += (w[y] = p[y] > q[y] ? p[y] - q[y] : 0);
            out[i] = sample(w, sum, rng);
            break;
        }
        if (i == g) {
            const float *p = specsim_p(bt, b, g);
            double sum = 0;
            for (int y = 0; y < V; y++) sum += (w[y] = p[y]);
            out[g] = sample(w, sum, rng);
        }
    }
    return 0;
}

}  // namespace

int main() {
    specsim_impl impl{};
    impl.name = "engine_verify.cpp";
    impl.verify = verify;
    impl.modes = "verify";
    return specsim_main(&impl);
}
