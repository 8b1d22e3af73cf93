package api

import (
	"embed"
	"io/fs"
	"net/http"
)

// uiFiles is the web UI: a page, its scripts (app.js over the API, layout.js
// placing the job graph) and a style sheet, built into the binary.
//
//go:embed ui
var uiFiles embed.FS

var (
	indexHTML = mustRead("ui/index.html")
	uiAssets  = http.FileServerFS(uiFiles)
)

func mustRead(name string) []byte {
	b, err := fs.ReadFile(uiFiles, name)
	if err != nil {
		panic(err)
	}
	return b
}

// ui serves the page; the page loads /ui/layout.js, /ui/app.js and
// /ui/style.css.
func ui(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(indexHTML)
}
