package external

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProtocolVersion is the newest protocol version the harness speaks (the
// hello message's "protocol" field); it also speaks every version from
// MinProtocol on, and uses the one the implementation's ready message
// names (version 1 when it names none).
const ProtocolVersion = 2

// MinProtocol is the oldest protocol version the harness speaks.
const MinProtocol = 1

// DefaultTimeout is how long the harness waits for one answer.
const DefaultTimeout = 60 * time.Second

// stderrTail is how many bytes of the child's stderr the harness keeps to
// quote in an error.
const stderrTail = 4096

// header is the JSON line that opens every message, in both directions.
type header struct {
	Op       string    `json:"op"`
	Protocol int       `json:"protocol,omitempty"`
	Mode     string    `json:"mode,omitempty"`
	Gamma    int       `json:"gamma,omitempty"`
	Vocab    int       `json:"vocab,omitempty"`
	Sampling *Sampling `json:"sampling,omitempty"`
	Contexts int       `json:"contexts,omitempty"`
	Batch    int       `json:"batch"`
	First    int64     `json:"first_step"`
	Size     int       `json:"size,omitempty"`
	Seed     uint64    `json:"seed"`
	Rows     string    `json:"rows,omitempty"`
	Coins    string    `json:"coins,omitempty"`
	Arrays   []string  `json:"arrays"`
	// Protocol 2: the versions the harness speaks (hello), where the
	// rows come from (hello: "pool", "markov" or "inline"), the arrays
	// every batch carries per row (hello), the tree drafter (hello, tree
	// mode) and the model tables' kind and order (model).
	Protocols []int    `json:"protocols,omitempty"`
	Source    string   `json:"source,omitempty"`
	PerRow    []string `json:"per_row,omitempty"`
	Draft     string   `json:"draft,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Order     int      `json:"order,omitempty"`
	// Replies.
	Name          string `json:"name,omitempty"`
	TakesSampling bool   `json:"takes_sampling,omitempty"`
	Message       string `json:"message,omitempty"`
}

// Sampling is the hello message's sampling parameters (the fields of
// data.Sampling, named as in transformers and vLLM).
type Sampling struct {
	Temperature float64 `json:"temperature"`
	TopK        int     `json:"top_k"`
	TopP        float64 `json:"top_p"`
	MinP        float64 `json:"min_p"`
}

// proc is a running implementation: its stdin and stdout pipes, with
// deadlines, and the tail of its stderr.
type proc struct {
	cmd     *exec.Cmd
	in      *os.File // the child's stdin (we write)
	out     *os.File // the child's stdout (we read)
	w       *bufio.Writer
	r       *bufio.Reader
	timeout time.Duration
	tail    *tailBuffer
	waited  chan struct{}
	waitErr error
	scratch []byte
}

// start runs command through /bin/sh -c in its own process group, so a
// timeout kills the whole group (the shell and the interpreter it
// started).
func start(command string, env []string, timeout time.Duration) (*proc, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("external: empty command; give the implementation's command line, e.g. \"python3 -m specsim_ext mymodule:verify\"")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p := &proc{in: inW, out: outR, timeout: timeout, tail: &tailBuffer{}, waited: make(chan struct{})}
	p.cmd = exec.Command("/bin/sh", "-c", command)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.tail
	p.cmd.Env = env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("external: starting %q: %w", command, err)
	}
	inR.Close()
	outW.Close()
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.waited)
	}()
	p.w = bufio.NewWriterSize(inW, 1<<20)
	p.r = bufio.NewReaderSize(outR, 1<<20)
	return p, nil
}

// kill ends the child's process group and closes the pipes.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	p.in.Close()
	p.out.Close()
	select {
	case <-p.waited:
	case <-time.After(5 * time.Second):
	}
}

// close asks the child to exit, waits up to the timeout, then kills it.
func (p *proc) close() error {
	err := p.send(header{Op: "close"}, nil)
	if err == nil {
		err = p.w.Flush()
	}
	p.in.Close()
	select {
	case <-p.waited:
	case <-time.After(p.timeout):
		p.kill()
		return fmt.Errorf("did not exit within %v of the close message", p.timeout)
	}
	p.out.Close()
	if err != nil {
		return err
	}
	if p.waitErr != nil {
		return fmt.Errorf("exited with %v after the close message%s", p.waitErr, p.tail.quote())
	}
	return nil
}

// send writes a header line and the frames written by body, then
// flushes, all within the timeout.
func (p *proc) send(h header, body func(w io.Writer) error) error {
	_ = p.in.SetWriteDeadline(time.Now().Add(p.timeout))
	line, err := json.Marshal(h)
	if err != nil {
		return err
	}
	p.w.Write(line)
	p.w.WriteByte('\n')
	if body != nil {
		if err := body(p.w); err != nil {
			return p.ioErr("writing to", err)
		}
	}
	if err := p.w.Flush(); err != nil {
		return p.ioErr("writing to", err)
	}
	return nil
}

// recv reads one reply header and its frames into arrs (in the order the
// header names them, which must be want).
func (p *proc) recv(want []string, arrs []*array) (header, error) {
	_ = p.out.SetReadDeadline(time.Now().Add(p.timeout))
	line, err := p.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return header{}, fmt.Errorf("the reply header line is longer than %d bytes (is something else printing to stdout? print diagnostics to stderr)", p.r.Size())
		}
		return header{}, p.ioErr("reading from", err)
	}
	var h header
	if err := json.Unmarshal(bytes.TrimSpace(line), &h); err != nil {
		return header{}, fmt.Errorf("the reply does not start with a JSON header line (got %q); print diagnostics to stderr, never to stdout", clip(string(line), 80))
	}
	if h.Op == "error" {
		return h, fmt.Errorf("the implementation reported an error: %s", h.Message)
	}
	if want == nil {
		return h, nil
	}
	if strings.Join(h.Arrays, ",") != strings.Join(want, ",") {
		return h, fmt.Errorf("the reply carries arrays %v, want %v", h.Arrays, want)
	}
	return h, p.readArrays(want, arrs)
}

// recvOneOf reads one reply whose arrays are one of the lists in opts,
// each into arrs[name], and returns the header and the list it carried.
func (p *proc) recvOneOf(opts [][]string, arrs map[string]*array) (header, []string, error) {
	h, err := p.recv(nil, nil)
	if err != nil {
		return h, nil, err
	}
	got := strings.Join(h.Arrays, ",")
	for _, o := range opts {
		if got != strings.Join(o, ",") {
			continue
		}
		as := make([]*array, len(o))
		for i, name := range o {
			as[i] = arrs[name]
		}
		return h, o, p.readArrays(o, as)
	}
	var alts []string
	for _, o := range opts {
		alts = append(alts, fmt.Sprint(o))
	}
	return h, nil, fmt.Errorf("the reply carries arrays %v, want %s", h.Arrays, strings.Join(alts, " or "))
}

// readArrays reads the frames of want into arrs, in order.
func (p *proc) readArrays(want []string, arrs []*array) error {
	var err error
	for i, a := range arrs {
		p.scratch, err = readNpy(p.r, a, p.scratch)
		if err != nil {
			if isIO(err) {
				return p.ioErr("reading from", err)
			}
			return fmt.Errorf("array %q: %v", want[i], err)
		}
	}
	return nil
}

func isIO(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE)
}

// ioErr turns a pipe error into a sentence: a timeout kills the child; an
// end of file means it exited (its status and last stderr line quoted).
func (p *proc) ioErr(what string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.kill()
		return fmt.Errorf("no answer within the timeout of %v (the implementation was killed; raise the timeout if it is just slow)%s", p.timeout, p.tail.quote())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		select {
		case <-p.waited:
		case <-time.After(2 * time.Second):
			p.kill()
		}
		status := "closed its pipes"
		if p.waitErr != nil {
			status = "exited (" + p.waitErr.Error() + ")"
		} else if p.cmd.ProcessState != nil {
			status = "exited with status 0"
		}
		return fmt.Errorf("the implementation %s before answering%s", status, p.tail.quote())
	}
	return fmt.Errorf("%s the implementation: %v", what, err)
}

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > stderrTail {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTail:]...)
	}
	return len(b), nil
}

// last returns the last non-empty line written.
func (t *tailBuffer) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// quote renders the last stderr line for an error message, or "".
func (t *tailBuffer) quote() string {
	if l := t.last(); l != "" {
		return fmt.Sprintf("; its last stderr line: %q", clip(l, 200))
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
