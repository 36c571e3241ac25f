package diag

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/specsim/specsim/internal/escape"
)

// Warnings are the caveats that travel with a result instead of failing
// it: a test with no degrees of freedom, observations in cells of
// probability zero, tail mass spread over a sparse log's rows. Each is an
// error, so a caller can test it with errors.Is against a package's
// sentinels (stattest.ErrNoData, …). In JSON they are a list of their
// messages, [] when there are none.
type Warnings []error

// Strings returns the messages.
func (w Warnings) Strings() []string {
	s := make([]string, len(w))
	for i, e := range w {
		s[i] = e.Error()
	}
	return s
}

// MarshalJSON encodes w as a list of messages ([] for none).
func (w Warnings) MarshalJSON() ([]byte, error) { return json.Marshal(w.Strings()) }

// UnmarshalJSON decodes a list of messages (null: none).
func (w *Warnings) UnmarshalJSON(b []byte) error {
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*w = nil
	for _, m := range s {
		*w = append(*w, errors.New(m))
	}
	return nil
}

// Print writes each warning as one line "<program>: warning: <message>",
// as the front ends report them on stderr; a message is escaped for a
// terminal (internal/escape), since it may quote input.
func (w Warnings) Print(out io.Writer, program string) {
	for _, e := range w {
		fmt.Fprintf(out, "%s: warning: %s\n", program, escape.Clip(escape.Terminal(strings.ReplaceAll(e.Error(), "\n", "; ")), escape.MaxLine))
	}
}
