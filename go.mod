module github.com/specsim/specsim

go 1.26
