# The main job and the paper. Everything is plain 'go run'; make is only a
# shorthand (see docs/main-job.md).
GO ?= go
OUT ?= results
SCALE ?= 1

.PHONY: reproduce paper notebooks

# Every named experiment at default size (times SCALE), report.md, figures,
# tables, and results/paper/paper.pdf where latexmk is installed.
reproduce:
	$(GO) run ./cmd/report reproduce --out $(OUT) --scale $(SCALE)

# Regenerate paper/generated from $(OUT) and build paper/paper.pdf.
paper:
	$(GO) run ./cmd/report paper $(OUT) --out paper --pdf

# Execute the notebooks on $(OUT)/csv (needs jupyter, pandas, matplotlib);
# the executed copies go to $(OUT)/notebooks, the tracked ones stay as they are.
notebooks:
	cd notebooks && for nb in *.ipynb; do SPECSIM_RESULTS=$(abspath $(OUT)) jupyter nbconvert --to notebook --execute --output-dir $(abspath $(OUT))/notebooks $$nb || exit 1; done
