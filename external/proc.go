package external

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	Protocol version   `json:"protocol,omitempty"`
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
	errPipe *os.File // the child's stderr (we read into tail)
	w       *bufio.Writer
	r       *bufio.Reader
	timeout time.Duration
	tail    *tailBuffer
	waited  chan struct{}
	waitErr error
	scratch []byte
	// cancelled is set when the context watch gives ends: every wait
	// then returns at once with an error wrapping context.Canceled.
	cancelled atomic.Bool
	done      chan struct{} // closed when the watched context ends
	stopWatch func()
	// mark is the environment entry every process of this implementation
	// inherits (markEnv): killDescendants finds the ones that left the
	// process group by it.
	mark string
}

// wrapper runs the command line as a job of a shell that leads its own
// process group: the command in a subshell in the background, reading the
// protocol from fd 3 (a background job's stdin is /dev/null), and the
// shell waiting for it. The shell is sent SIGTERM when the harness dies,
// even by SIGKILL (Pdeathsig, Linux), and kills the whole group then, so
// neither the implementation nor a helper it started outlives the
// harness. Its exit status is the command's.
const wrapper = `trap 'kill -KILL 0' TERM HUP
( %s
) <&3 3<&- &
wait $!
s=$?
trap - TERM HUP
exit $s`

// markEnv names the environment variable that marks an implementation's
// processes (its value is the harness's pid and a run number): a process
// the implementation started and detached with setsid keeps it, and the
// harness, its subreaper on Linux, kills every process below it that
// carries its run's mark (killDescendants). docs/external.md says so.
const markEnv = "SPECSIM_EXTERNAL_RUN"

// runs numbers the implementations this process starts.
var runs atomic.Int64

// start runs command through /bin/sh in its own process group (wrapper),
// so every exit path kills the whole group: the shell, the interpreter it
// started and any helper process of the implementation.
func start(command string, env []string, timeout time.Duration) (*proc, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("external: empty command; give the implementation's command line, e.g. \"python3 -m specsim_ext mymodule:verify\"")
	}
	var pipes [6]*os.File // inR, inW, outR, outW, errR, errW
	closeAll := func() {
		for _, f := range pipes {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		pipes[i], pipes[i+1] = r, w
	}
	inR, inW, outR, outW, errR, errW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	p := &proc{in: inW, out: outR, errPipe: errR, timeout: timeout, tail: &tailBuffer{}, waited: make(chan struct{}), done: make(chan struct{}), stopWatch: func() {}}
	p.cmd = exec.Command("/bin/sh", "-c", fmt.Sprintf(wrapper, command))
	// every stream an *os.File: Wait returns when the shell exits, never
	// waiting on a copy that a helper holding a pipe would keep open
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	p.cmd.ExtraFiles = []*os.File{inR}
	if env == nil {
		env = os.Environ()
	}
	p.mark = fmt.Sprintf("%s=%d.%d", markEnv, os.Getpid(), runs.Add(1))
	p.cmd.Env = append(env[:len(env):len(env)], p.mark)
	becomeSubreaper()
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(p.cmd.SysProcAttr)
	if err := p.cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("external: starting %q: %w", command, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	go func() {
		io.Copy(p.tail, errR) // ends when the last writer (helpers too) is gone
	}()
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.waited)
	}()
	p.w = bufio.NewWriterSize(inW, 1<<20)
	p.r = bufio.NewReaderSize(outR, 1<<20)
	return p, nil
}

// watch makes every wait on the child listen to ctx: once ctx is done,
// the pending read or write returns at once (its deadline is moved to
// now) and fails with an error wrapping context.Canceled, as every later
// one does. stop ends the watch.
func (p *proc) watch(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			p.cancelled.Store(true)
			close(p.done)
			now := time.Now()
			_ = p.in.SetWriteDeadline(now)
			_ = p.out.SetReadDeadline(now)
		case <-done:
		}
	}()
	var once sync.Once
	p.stopWatch = func() { once.Do(func() { close(done) }) }
	return p.stopWatch
}

// errCancelled is the error of a wait given up because the context
// ended (it wraps context.Canceled, which callers report as interrupted).
var errCancelled = fmt.Errorf("interrupted while waiting for the implementation: %w", context.Canceled)

// interrupted returns err marked as an interruption (errors.Is with
// context.Canceled, its message kept) when the watched context has ended:
// a failure met then (a wait given up, a pipe the killed child closed) is
// Ctrl-C's, and the check keeps the trials finished before it. Other
// errors are returned as they are.
func (p *proc) interrupted(err error) error {
	if err == nil || !p.cancelled.Load() || errors.Is(err, context.Canceled) {
		return err
	}
	return interruption{err}
}

// interruption is an error that also matches context.Canceled.
type interruption struct{ error }

func (e interruption) Unwrap() []error { return []error{e.error, context.Canceled} }

// setDeadline sets a pipe's deadline for the next operation, unless the
// watch was cancelled (checked after setting it, so a cancellation that
// lands in between still moves it to now).
func (p *proc) deadline(set func(time.Time) error) error {
	_ = set(time.Now().Add(p.timeout))
	if p.cancelled.Load() {
		_ = set(time.Now())
		return errCancelled
	}
	return nil
}

// killGroup sends SIGKILL to the child's whole process group: the
// implementation and any helper it started (ESRCH, a group already gone,
// is fine).
func (p *proc) killGroup() {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// kill ends the child's process group and every process that left it
// (killDescendants), and closes the pipes.
func (p *proc) kill() {
	p.stopWatch()
	p.killGroup()
	if p.cmd.Process != nil {
		killDescendants(p.mark, p.cmd.Process.Pid)
	}
	p.in.Close()
	p.out.Close()
	select {
	case <-p.waited:
	case <-time.After(5 * time.Second):
	}
	p.errPipe.Close()
}

// CloseGrace is how long the harness waits for the implementation to
// exit after the close message (at most the timeout) before it kills the
// implementation's process group: every answer is in by then, so a
// verdict never waits on an implementation that does not exit.
const CloseGrace = 2 * time.Second

// close asks the child to exit, waits up to CloseGrace (or until the
// watched context ends), then kills its group either way: a helper the
// implementation left running does not outlive the check, and does not
// hold its verdict hostage by keeping a pipe open. The error says what
// went wrong at the close; every answer was received before it.
func (p *proc) close() error {
	err := p.send(header{Op: "close"}, nil)
	if err == nil {
		err = p.w.Flush()
	}
	p.in.Close()
	grace := min(CloseGrace, p.timeout)
	select {
	case <-p.waited:
	case <-p.done:
		p.kill()
		return fmt.Errorf("interrupted while waiting for it to exit after the close message; its process group was killed: %w", context.Canceled)
	case <-time.After(grace):
		p.kill()
		return fmt.Errorf("did not exit within %v of the close message; its process group was killed", grace)
	}
	p.kill() // the group: helpers left behind
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
	if err := p.deadline(p.in.SetWriteDeadline); err != nil {
		return err
	}
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
// header names them, which must be want). shapes, when given, are the
// arrays' expected shapes, checked from each frame's header before its
// data is allocated.
func (p *proc) recv(want []string, arrs []*array, shapes ...[]int) (header, error) {
	if err := p.deadline(p.out.SetReadDeadline); err != nil {
		return header{}, err
	}
	line, err := p.r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return header{}, fmt.Errorf("the reply header line is longer than %d bytes (is something else printing to stdout? print diagnostics to stderr)", p.r.Size())
		}
		return header{}, p.ioErr("reading from", err)
	}
	var h header
	if err := json.Unmarshal(bytes.TrimSpace(line), &h); err != nil {
		return header{}, headerError(err, line)
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
	return h, p.readArrays(want, arrs, shapes)
}

// headerError says why a reply's header line did not decode: a field of
// the wrong type or value (named, with what it holds and what it must
// hold), or a line that is not JSON at all.
func headerError(err error, line []byte) error {
	var fe fieldError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("the reply's %q field is %s; want %s", fe.field, fe.got, fe.want)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("the reply's %q field is a JSON %s; want a JSON %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return fmt.Errorf("the reply does not start with a JSON header line (got %q); print diagnostics to stderr, never to stdout", clip(string(line), 80))
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "number"
	case k == "slice":
		return "array"
	case k == "struct", k == "map", k == "ptr":
		return "object"
	case k == "bool":
		return "boolean"
	}
	return k
}

// fieldError is a header field whose value is refused: the field, what
// it holds and what it must hold.
type fieldError struct{ field, got, want string }

func (e fieldError) Error() string { return fmt.Sprintf("%s = %s; want %s", e.field, e.got, e.want) }

// version is a header's "protocol" field. Present, it must be a whole
// number from MinProtocol on (written without a fraction or exponent):
// null, 0, a negative number, 1.5 or "2" are refused with the field named
// (a string was "not a JSON header line", and 0, -1 or null were taken as
// protocol 1). An absent field is protocol 1.
type version int

// UnmarshalJSON implements json.Unmarshaler.
func (v *version) UnmarshalJSON(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < MinProtocol {
		return fieldError{field: "protocol", got: clip(string(b), 40),
			want: fmt.Sprintf("a whole number from %d to %d, or no field for protocol 1", MinProtocol, ProtocolVersion)}
	}
	*v = version(n)
	return nil
}

// recvOneOf reads one reply whose arrays are one of the lists in opts,
// each into arrs[name] with the shape shapes[name] (checked from the
// frame's header before its data is read; no entry: any shape), and
// returns the header and the list it carried.
func (p *proc) recvOneOf(opts [][]string, arrs map[string]*array, shapes map[string][]int) (header, []string, error) {
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
		ss := make([][]int, len(o))
		for i, name := range o {
			as[i], ss[i] = arrs[name], shapes[name]
		}
		return h, o, p.readArrays(o, as, ss)
	}
	var alts []string
	for _, o := range opts {
		alts = append(alts, fmt.Sprint(o))
	}
	return h, nil, fmt.Errorf("the reply carries arrays %v, want %s", h.Arrays, strings.Join(alts, " or "))
}

// readArrays reads the frames of want into arrs, in order; shapes[i], when
// given, is the shape frame i must declare, checked from its header
// before its data is allocated.
func (p *proc) readArrays(want []string, arrs []*array, shapes [][]int) error {
	var err error
	for i, a := range arrs {
		var expect []int
		if i < len(shapes) {
			expect = shapes[i]
		}
		p.scratch, err = readNpy(p.r, a, p.scratch, expect...)
		if err != nil {
			if isIO(err) {
				return p.ioErr("reading from", err)
			}
			if errors.Is(err, errShape) {
				return fmt.Errorf("%s %v", want[i], err)
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
	if p.cancelled.Load() {
		// whatever the pipe says, the wait was given up for Ctrl-C
		p.kill()
		return errCancelled
	}
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
