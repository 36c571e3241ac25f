// Package notebooks holds Jupyter notebooks (Python kernel, pandas and
// matplotlib) that explore the main job's results beyond the report's fixed
// figures: block_vs_token.ipynb, lossy_frontier.ipynb and multidraft.ipynb.
// They read the CSV exports under $SPECSIM_RESULTS/csv/ (default
// ../results/csv, written by 'report reproduce' and 'report build'; or
// 'report export FILE.parquet --format csv'), since Debian's pandas has no
// parquet reader. Each notebook also asserts a few invariants of the data
// (no verifier beats the optimal bound, Pinsker's inequality, lenience's
// ratio bound), so executing it is a check.
//
// The test in this package executes every notebook headless with
// 'jupyter nbconvert --execute' on results of the main job at scale 0.01;
// it skips with a message where jupyter, pandas or matplotlib is missing:
//
//	apt-get install jupyter-nbconvert python3-nbconvert python3-ipykernel python3-pandas python3-matplotlib
package notebooks // import "github.com/specsim/specsim/notebooks"
