package external

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/specsim/specsim/algos"
	"github.com/specsim/specsim/sim"
)

// The test binary doubles as an implementation written in Go: with
// SPECSIM_FAKE=<behaviour> in its environment it serves the protocol on
// stdin/stdout instead of running tests. Behaviours: an algos rule name
// (verify mode: the rule on the rows and drafts received), "crash" (exit
// in the first batch), "hang" (never answer the first batch), "lie"
// (claim an accepted prefix that differs from the drafts), "noise" (print
// a line to stdout before the first answer), "linger" (verify with the
// token rule, then never exit after the close message). With
// SPECSIM_FAKE_NAME (a JSON string, so it can hold any character) it
// calls itself that name instead of fake:<behaviour>; internal/clitest
// runs this binary as a hostile implementation that way.
func TestMain(m *testing.M) {
	if b := os.Getenv("SPECSIM_FAKE"); b != "" {
		if err := fakeServe(b, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeCommand returns the command that runs this test binary as an
// implementation with behaviour b.
func fakeCommand(b string) (string, []string) {
	exe, _ := os.Executable()
	return "exec '" + exe + "'", append(os.Environ(), "SPECSIM_FAKE="+b)
}

func fakeServe(behaviour string, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	var g, v int
	var poolP, poolQ array
	var scratch []byte
	name := behaviour
	if _, err := algos.Lookup(name); err != nil {
		name = "token" // the misbehaving fakes verify with the token rule
	}
	e, _ := algos.Lookup(name)
	rule, err := e.Build(nil) // the rule at its default parameters, as the harness's candidates
	if err != nil {
		return err
	}
	reply := func(h header, arrs ...[]int64) error {
		line, _ := json.Marshal(h)
		w.Write(line)
		w.WriteByte('\n')
		for _, a := range arrs {
			var err error
			if scratch, err = writeI64(w, []int{len(a) / (g + 1), g + 1}, a, scratch); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil
		}
		var h header
		if err := json.Unmarshal(line, &h); err != nil {
			return err
		}
		switch h.Op {
		case "hello":
			g, v = h.Gamma, h.Vocab
			ready := header{Op: "ready", Name: "fake:" + behaviour}
			if js := os.Getenv("SPECSIM_FAKE_NAME"); js != "" {
				if err := json.Unmarshal([]byte(js), &ready.Name); err != nil {
					return fmt.Errorf("SPECSIM_FAKE_NAME: %v", err)
				}
			}
			if err := reply(ready); err != nil {
				return err
			}
		case "pool":
			if scratch, err = readNpy(r, &poolP, scratch); err != nil {
				return err
			}
			if scratch, err = readNpy(r, &poolQ, scratch); err != nil {
				return err
			}
			if err := reply(header{Op: "ok"}); err != nil {
				return err
			}
		case "batch":
			arrs := map[string]*array{}
			for _, name := range h.Arrays {
				a := &array{}
				if scratch, err = readNpy(r, a, scratch); err != nil {
					return err
				}
				arrs[name] = a
			}
			switch behaviour {
			case "crash":
				os.Exit(7)
			case "hang":
				time.Sleep(time.Hour)
			case "noise":
				fmt.Fprintln(w, "debug: got a batch")
			}
			rng := sim.NewRand(h.Seed, 0)
			switch h.Coins { // scripted coins, as check.EdgeCheck's
			case coinsZero:
				rng = rand.New(constSource(0))
			case coinsMax:
				rng = rand.New(constSource(^uint64(0)))
			}
			emitted := make([]int64, 0, h.Size*(g+1))
			drafts := arrs["drafts"].I64
			for b := 0; b < h.Size; b++ {
				blk := sim.Block{Tokens: make([]int, g), P: make([]sim.Row, g+1), Q: make([]sim.Row, g)}
				for i := range g + 1 {
					blk.P[i] = sim.F32(fakeRow(arrs, &poolP, "p", b, i, g+1, v))
				}
				for i := range g {
					blk.Q[i] = sim.F32(fakeRow(arrs, &poolQ, "q", b, i, g, v))
					blk.Tokens[i] = int(drafts[b*g+i])
				}
				o := rule.Accept(rng, &blk)
				row := make([]int64, g+1)
				for i := range row {
					row[i] = -1
				}
				for i := 0; i < o.Accepted; i++ {
					row[i] = int64(blk.Tokens[i])
				}
				if o.Next != sim.NoToken {
					row[o.Accepted] = int64(o.Next)
				}
				if behaviour == "lie" && b == 3 {
					row[0], row[1] = (row[0]+1)%int64(v), int64(blk.Tokens[1])
				}
				emitted = append(emitted, row...)
			}
			if err := reply(header{Op: "result", Batch: h.Batch, Arrays: []string{"emitted"}}, emitted); err != nil {
				return err
			}
		case "close":
			if behaviour == "linger" {
				if f := os.Getenv("SPECSIM_FAKE_CLOSED"); f != "" {
					os.WriteFile(f, nil, 0o644) // a test's signal: the close arrived
				}
				time.Sleep(time.Hour)
			}
			return nil
		}
	}
}

// constSource always returns the same word: 0 makes every Float64
// exactly 0, ^0 makes it 1 - 2^-53.
type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

// fakeRow returns row i of batch row b: from the inline arrays or from
// the pool through ctx.
func fakeRow(arrs map[string]*array, pool *array, name string, b, i, n, v int) []float32 {
	if a, ok := arrs[name]; ok {
		return a.F32[(b*n+i)*v : (b*n+i+1)*v]
	}
	c := int(arrs["ctx"].I64[b])
	return pool.F32[(c*n+i)*v : (c*n+i+1)*v]
}
