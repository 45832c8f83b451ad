package tui

import "testing"

func TestDarkBackground(t *testing.T) {
	tests := []struct {
		colorfgbg string
		dark      bool
	}{
		{"", true}, // nothing said: assume dark, never ask
		{"15;0", true},
		{"0;15", false},
		{"0;7", false},
		{"7;default;0", true},
		{"garbage", true},
	}
	for _, tt := range tests {
		if got := darkBackground(tt.colorfgbg); got != tt.dark {
			t.Errorf("darkBackground(%q) = %v, want %v", tt.colorfgbg, got, tt.dark)
		}
	}
}
