// rust_verify.rs: token verification in Rust, served to specsim through the
// C client (specsim.h) it links: rustc -O --edition 2021 rust_verify.rs -L DIR
// -l static=specsim, DIR holding libspecsim.a (cc -c specsim.c; ar rcs
// libspecsim.a specsim.o). The declarations below follow specsim.h.
use std::os::raw::{c_char, c_int, c_void};

#[repr(C)]
pub struct SpecsimRng {
    s: [u64; 4],
    scripted: c_int,
    value: f64,
}

// The leading fields of specsim_batch, in the header's order; the rest is
// reached through the accessor functions (the struct is only borrowed).
#[repr(C)]
pub struct SpecsimBatch {
    mode: *const c_char,
    protocol: c_int,
    index: c_int,
    first_step: i64,
    size: c_int,
    gamma: c_int,
    vocab: c_int,
    // ... further fields: read them through the accessors
}

#[repr(C)]
pub struct SpecsimReply {
    emitted: *mut i64,
    drafts: *mut i64,
    with_drafts: c_int,
    error: [c_char; 256],
}

type VerifyFn = extern "C" fn(*const SpecsimBatch, *mut SpecsimReply, *mut c_void) -> c_int;

#[repr(C)]
pub struct SpecsimImpl {
    name: *const c_char,
    verify: VerifyFn,
    user: *mut c_void,
    modes: *const c_char,
    takes_sampling: c_int,
}

extern "C" {
    fn specsim_random(rng: *mut SpecsimRng) -> f64;
    fn specsim_p(b: *const SpecsimBatch, row: c_int, i: c_int) -> *const f32;
    fn specsim_q(b: *const SpecsimBatch, row: c_int, i: c_int) -> *const f32;
    fn specsim_draft(b: *const SpecsimBatch, row: c_int, i: c_int) -> i64;
    fn specsim_row_gamma(b: *const SpecsimBatch, row: c_int) -> c_int;
    fn specsim_row_rng(b: *const SpecsimBatch, row: c_int) -> *mut SpecsimRng;
    fn specsim_main(im: *const SpecsimImpl) -> c_int;
}

unsafe fn sample(w: &[f64], rng: *mut SpecsimRng) -> i64 {
    let sum: f64 = w.iter().sum();
    let t = specsim_random(rng) * sum;
    let (mut c, mut last) = (0.0, 0);
    for (y, &x) in w.iter().enumerate() {
        if x <= 0.0 {
            continue;
        }
        c += x;
        last = y;
        if c > t {
            return y as i64;
        }
    }
    last as i64
}

extern "C" fn verify(bt: *const SpecsimBatch, r: *mut SpecsimReply, _: *mut c_void) -> c_int {
    unsafe {
        let (v, g) = ((*bt).vocab as usize, (*bt).gamma as usize);
        let mut w = vec![0.0f64; v];
        for b in 0..(*bt).size {
            let rng = specsim_row_rng(bt, b);
            let out = std::slice::from_raw_parts_mut((*r).emitted.add(b as usize * (g + 1)), g + 1);
            let gb = specsim_row_gamma(bt, b);
            let mut i = 0;
            while i < gb {
                let x = specsim_draft(bt, b, i) as usize;
                let p = std::slice::from_raw_parts(specsim_p(bt, b, i), v);
                let q = std::slice::from_raw_parts(specsim_q(bt, b, i), v);
                if specsim_random(rng) * (q[x] as f64) < p[x] as f64 {
                    out[i as usize] = x as i64;
                    i += 1;
                    continue;
                }
                for y in 0..v {
                    w[y] = (p[y] as f64 - q[y] as f64).max(0.0);
                }
                out[i as usize] = sample(&w, rng);
                break;
            }
            if i == gb {
                let p = std::slice::from_raw_parts(specsim_p(bt, b, gb), v);
                for y in 0..v {
                    w[y] = p[y] as f64;
                }
                out[gb as usize] = sample(&w, rng);
            }
        }
    }
    0
}

fn main() {
    let im = SpecsimImpl {
        name: b"rust_verify\0".as_ptr() as *const c_char,
        verify,
        user: std::ptr::null_mut(),
        modes: b"verify\0".as_ptr() as *const c_char,
        takes_sampling: 0,
    };
    std::process::exit(unsafe { specsim_main(&im) });
}
