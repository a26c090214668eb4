package edge

import "testing"

func TestNeutralizeBidi(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"<td>Ada – “Lovelace”</td>", "<td>Ada – “Lovelace”</td>"},
		{"<td>Ad\u202Ea</td>", "<td>Ad\uFFFDa</td>"},
		{"\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"שלום \u2067x\u2069 مرحبا", "שלום \uFFFDx\uFFFD مرحبا"},
	}
	for _, tt := range tests {
		if got := string(NeutralizeBidi([]byte(tt.in))); got != tt.want {
			t.Errorf("NeutralizeBidi(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
