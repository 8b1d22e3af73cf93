package api

import "net/http"

// kind names a problem type of this API: an entry of the catalogue. A
// problem is only ever made from a kind (kind.problem, kind.listed), so the
// catalogue lists every type the API answers with; docs/API.md lists the
// same ones (catalogue_test.go checks both).
type kind int

// The problem kinds.
const (
	invalidRequest kind = iota
	invalidModule
	invalidSpec
	invalidJob
	notFound
	moduleInUse
	jobFinished
	noCheckpoints
	jobNotEnded
	savepointInUse
	switchInProgress
	unauthenticated
	insufficientScope
	tooManyUploads
	requestTimeout
	workerUnreachable
	bodyTimeout
	noRoute
	methodNotAllowed
	bodyTooLarge
	unsupportedMediaType
	internalError
	notReady
	noCanary
	numKinds
)

// kindInfo is what a client sees of a kind: its type URI, title and
// HTTP status.
type kindInfo struct {
	typ    string
	title  string
	status int
}

const problemBase = "https://wasmstream.io/problems/"

// catalogue is every problem type of the API. The types under problemBase
// are stable identifiers clients branch on; about:blank ones say no more
// than their status.
var catalogue = [numKinds]kindInfo{
	invalidRequest:       {problemBase + "invalid-request", "Invalid request", http.StatusBadRequest},
	invalidModule:        {problemBase + "invalid-module", "Invalid module", http.StatusBadRequest},
	invalidSpec:          {problemBase + "invalid-spec", "Invalid job spec", http.StatusBadRequest},
	invalidJob:           {problemBase + "invalid-job", "Invalid job", http.StatusBadRequest},
	notFound:             {problemBase + "not-found", "Not found", http.StatusNotFound},
	moduleInUse:          {problemBase + "module-in-use", "Module in use", http.StatusConflict},
	jobFinished:          {problemBase + "job-finished", "Job already finished", http.StatusConflict},
	noCheckpoints:        {problemBase + "no-checkpoints", "Job takes no checkpoints", http.StatusConflict},
	jobNotEnded:          {problemBase + "job-not-ended", "Job has not ended", http.StatusConflict},
	savepointInUse:       {problemBase + "savepoint-in-use", "Savepoint in use", http.StatusConflict},
	switchInProgress:     {problemBase + "switch-in-progress", "Job is switching versions", http.StatusConflict},
	insufficientScope:    {problemBase + "insufficient-scope", "Insufficient scope", http.StatusForbidden},
	tooManyUploads:       {problemBase + "too-many-uploads", "Too many uploads", http.StatusServiceUnavailable},
	requestTimeout:       {problemBase + "request-timeout", "Request timed out", http.StatusServiceUnavailable},
	workerUnreachable:    {problemBase + "worker-unreachable", "Worker unreachable", http.StatusBadGateway},
	unauthenticated:      blank(http.StatusUnauthorized),
	bodyTimeout:          blank(http.StatusRequestTimeout),
	noRoute:              blank(http.StatusNotFound),
	methodNotAllowed:     blank(http.StatusMethodNotAllowed),
	bodyTooLarge:         blank(http.StatusRequestEntityTooLarge),
	unsupportedMediaType: blank(http.StatusUnsupportedMediaType),
	internalError:        blank(http.StatusInternalServerError),
	notReady:             blank(http.StatusServiceUnavailable),
	noCanary:             {problemBase + "no-canary", "Job runs no canary", http.StatusConflict},
}

// blank is the about:blank type of an HTTP status: its title is the
// status text.
func blank(status int) kindInfo {
	return kindInfo{typ: "about:blank", title: http.StatusText(status), status: status}
}
