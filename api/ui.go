package api

import (
	_ "embed"
	"net/http"
)

// indexHTML is a placeholder page that lists jobs and modules through the API.
//
//go:embed ui/index.html
var indexHTML []byte

func ui(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(indexHTML)
}
