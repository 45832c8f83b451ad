// Package dayfilter rules out keys that cannot exist without reading them: Bloom filters
// of the keys written each day, for records that are only ever looked up on the day
// they were written or the day after (reader records salted with their day, update_id
// seen-markers that live 24 h).
package dayfilter
