package results

import "fmt"

// DecoderPanic is a panic raised inside parquet-go, returned as an error
// by Guard.
type DecoderPanic struct{ Value any }

func (e *DecoderPanic) Error() string { return fmt.Sprintf("the parquet decoder failed (%v)", e.Value) }

// Guard runs f, which must be one call into parquet-go and nothing of
// ours, and returns a panic raised inside it as a *DecoderPanic (nil when
// f returns). parquet-go (v0.32) panics instead of returning an error on
// some damaged files: a page header whose value count decodes negative
// reaches panicNumValuesOutOfRange in makeNumValues, and no check before
// the call can rule that out, since the page headers are Thrift inside the
// column chunks, outside any checksum the format offers (page CRCs cover
// the data, not the header). Our own code returns errors: besides this
// one, the only recover is the process boundary's crash report
// (internal/cliutil.Run), which resumes nothing. TestReadDamaged (every byte
// of a results file damaged) and the FuzzReader corpus of data fail if it
// is removed.
func Guard(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &DecoderPanic{Value: p}
		}
	}()
	f()
	return nil
}
