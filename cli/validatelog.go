package cli

import (
	"errors"
	"fmt"

	"github.com/specsim/specsim/internal/cliutil"

	"github.com/urfave/cli/v2"

	"github.com/specsim/specsim/data"
)

func init() { register(validateLogCommand) }

// validateLogJSON is the JSON form of 'simulate validate-log'.
type validateLogJSON struct {
	File       string            `json:"file"`
	Valid      bool              `json:"valid"`
	Readable   bool              `json:"readable"`
	Rows       int64             `json:"rows"`
	Checked    int64             `json:"checked"`
	RowGroups  int               `json:"row_groups"`
	Provenance map[string]string `json:"provenance"`
	Problems   []string          `json:"problems"`
	Warnings   []string          `json:"warnings"`
}

func validateLogCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate-log",
		Usage:     "check a log file: schema, shapes, values and decoding; exit 2 for invalid content, 5 for an unreadable file",
		ArgsUsage: "FILE",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max-problems", Value: 10, Usage: "list at most this many problems"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cliutil.Usage(fmt.Errorf("validate-log takes one FILE argument, got %d", c.NArg()))
			}
			path := c.Args().First()
			out := validateLogJSON{File: path, Problems: []string{}, Warnings: []string{}}
			res := validateLog(path, c.Int("max-problems"), &out)
			if c.Bool("json") {
				if err := cliutil.WriteJSON(c.App.Writer, out); err != nil {
					return cliutil.IO(err)
				}
			} else {
				w := c.App.Writer
				if out.Valid {
					fmt.Fprintf(w, "%s: valid, %d rows in %d row groups (writer %q, source %q)\n", path, out.Rows, out.RowGroups,
						out.Provenance["writer"], out.Provenance["source"])
				}
				for _, p := range out.Problems {
					fmt.Fprintf(w, "%s: %s\n", path, p)
				}
			}
			return res
		},
	}
}

// validateLog reads the whole file, listing up to max problems; it
// returns nil, a usage error (invalid content) or an I/O error.
func validateLog(path string, max int, out *validateLogJSON) error {
	r, err := data.Open(path, data.ReadOptions{})
	if err != nil {
		out.Problems = append(out.Problems, err.Error())
		if errors.Is(err, data.ErrInvalid) {
			out.Readable = true
			return cliutil.Usage(fmt.Errorf("%s is not a valid log: %v", path, err))
		}
		return cliutil.IO(fmt.Errorf("%s is unreadable: %v", path, err))
	}
	defer r.Close()
	out.Readable = true
	m := r.Meta()
	out.Rows, out.RowGroups, out.Provenance = m.Rows, m.RowGroups, provMap(m.Provenance)
	invalid := 0
	for {
		for r.Next() {
			out.Checked++
		}
		err := r.Err()
		if err == nil {
			break
		}
		if errors.Is(err, data.ErrInvalid) {
			invalid++
			if len(out.Problems) < max {
				out.Problems = append(out.Problems, err.Error())
			}
			if r.Resume() {
				continue
			}
			break
		}
		out.Readable = false
		out.Problems = append(out.Problems, err.Error())
		return cliutil.IO(fmt.Errorf("%s is unreadable after %d rows: %v", path, out.Checked, err))
	}
	out.Warnings = append(out.Warnings, r.Warnings()...)
	if invalid > 0 {
		return cliutil.Usage(fmt.Errorf("%s is not a valid log: %d invalid rows, first: %s", path, invalid, out.Problems[0]))
	}
	out.Valid = true
	return nil
}
