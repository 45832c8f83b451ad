// Package catalog owns the plan catalogue: which spec_id maps to which provider, plan
// and regions, at what monthly price. It is loaded from a JSON file, with a default
// shipped inside the binary (plans.json) so that hangar runs with no configuration.
package catalog
