package components

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
		if got := MaskSecrets(tt.in); got != tt.want {
			t.Errorf("MaskSecrets(%q) = %q, want %q", tt.in, got, tt.want)
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
		if got := Sparkline(tt.vals, tt.width); got != tt.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", tt.vals, tt.width, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		w    int
		want string
	}{
		{"short", 10, "short"},
		{"linode: 503 service unavailable", 16, "linode: 503…"},
		{"vultr: plan sold out", 12, "vultr: plan…"}, // the cut falls on a space
		{"7000012345", 6, "70000…"},                  // one word: cut where it must be
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.w); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
	}
}

func TestMoney(t *testing.T) {
	tests := []struct {
		minor    int64
		currency string
		want     string
	}{
		{5000, "KRW", "5,000 KRW"},
		{1234567, "krw", "1,234,567 KRW"},
		{5000, "USD", "50.00 USD"},
		{5, "USD", "0.05 USD"},
		{-1250, "EUR", "-12.50 EUR"},
		{1234, "BHD", "1.234 BHD"},
		{0, "JPY", "0 JPY"},
		{7000, "", "7,000"}, // no catalogue yet: no minor unit guessed
	}
	for _, tt := range tests {
		if got := Money(tt.minor, tt.currency); got != tt.want {
			t.Errorf("Money(%d, %q) = %q, want %q", tt.minor, tt.currency, got, tt.want)
		}
	}
}

func TestFitColumnsHidesHighDropFirst(t *testing.T) {
	cols := []Column{{Title: "a", Min: 5}, {Title: "b", Min: 5, Flex: 1, Drop: 2}, {Title: "c", Min: 5, Flex: 1, Drop: 1}}
	tests := []struct {
		width int
		want  [3]int
	}{
		{30, [3]int{5, 9, 10}},
		{14, [3]int{5, 0, 5}},
		{7, [3]int{5, 0, 0}},
	}
	for _, tt := range tests {
		got := FitColumns(cols, tt.width)
		if [3]int(got) != tt.want {
			t.Errorf("width %d: widths %v, want %v", tt.width, got, tt.want)
		}
	}
}
