// Package deps pins the modules hangar's packages use, so that go.mod and go.sum list
// them before the packages that import them exist. It is never imported.
package deps
