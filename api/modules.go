package api

import (
	"net/http"
	"net/url"

	"wasmstream.io/platform/runtime"
)

// uploadModule stores the body's module under its content hash and, with
// ?name=N, as the next version of the name N.
func (s *server) uploadModule(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if r.URL.Query().Has("name") {
		if err := runtime.CheckModuleName(name); err != nil {
			writeProblem(w, invalidRequest.listed("", []fieldProblem{{Field: "name", Message: err.Error()}}))
			return
		}
	}
	if !mediaTypeOK(w, r, "application/wasm", "application/octet-stream") {
		return
	}
	// A body whose length is unknown may be as large as the limit.
	limit := s.maxModule
	if r.ContentLength > limit {
		tooLarge(w, limit, "module")
		return
	}
	reserved := limit
	if r.ContentLength >= 0 {
		reserved = r.ContentLength
	}
	if why, ok := s.uploads.acquire(reserved); !ok {
		busy(w, why)
		return
	}
	wasm, ok := readBody(w, r, limit, "module")
	s.uploads.shrink(reserved, int64(len(wasm)))
	defer s.uploads.release(int64(len(wasm)))
	if !ok {
		return
	}
	var info runtime.ModuleInfo
	var err error
	if name != "" {
		info, err = s.modules.UploadNamedModule(r.Context(), wasm, name)
	} else {
		info, err = s.modules.UploadModule(r.Context(), wasm)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/modules/"+url.PathEscape(info.ID))
	s.writeJSON(w, r, http.StatusCreated, info)
}

func (s *server) listModules(w http.ResponseWriter, r *http.Request) {
	mods, err := s.modules.ListModules(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if mods == nil {
		mods = []runtime.ModuleInfo{}
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Modules []runtime.ModuleInfo `json:"modules"`
	}{mods})
}

func (s *server) getModule(w http.ResponseWriter, r *http.Request) {
	info, err := s.modules.GetModule(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, info)
}

func (s *server) deleteModule(w http.ResponseWriter, r *http.Request) {
	if err := s.modules.DeleteModule(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
