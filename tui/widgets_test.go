package tui

import "testing"

func TestMaskSecrets(t *testing.T) {
	tests := []struct{ in, want string }{
		{"server ready: 1.2.3.4 root password: hunter2", "server ready: 1.2.3.4 root password: ••••••••"},
		{"password=hunter2 and more", "password=•••••••• and more"},
		{"Root Password hunter2", "Root Password ••••••••"},
		{"token: abc.def", "token: ••••••••"},
		{"already masked: password: ••••••••", "already masked: password: ••••••••"},
		{"비밀번호: 1234abcd", "비밀번호: ••••••••"},
		{"order received (#45)", "order received (#45)"},
	}
	for _, tt := range tests {
		if got := maskSecrets(tt.in); got != tt.want {
			t.Errorf("maskSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		vals  []float64
		width int
		want  string
	}{
		{nil, 3, "   "},
		{[]float64{0, 7}, 4, "  ▁█"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, "▆▇█"},
		{[]float64{5, 5}, 2, "██"},
	}
	for _, tt := range tests {
		if got := sparkline(tt.vals, tt.width); got != tt.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", tt.vals, tt.width, got, tt.want)
		}
	}
}

func TestFitColumnsHidesLowRankFirst(t *testing.T) {
	cols := []column{{"a", 5, 0, 0}, {"b", 5, 1, 2}, {"c", 5, 1, 1}}
	tests := []struct {
		width int
		want  [3]int
	}{
		{30, [3]int{5, 9, 10}},
		{14, [3]int{5, 0, 5}},
		{7, [3]int{5, 0, 0}},
	}
	for _, tt := range tests {
		got := fitColumns(cols, tt.width)
		for i := range got {
			if got[i].Width != tt.want[i] {
				t.Errorf("width %d: columns %v, want %v", tt.width, got, tt.want)
				break
			}
		}
	}
}
