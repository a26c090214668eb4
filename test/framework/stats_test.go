package framework

import (
	"cmp"
	"math"
	"slices"
	"testing"
)

// mannWhitney compares two samples with the Mann-Whitney U test: u is a's
// statistic (how often a value of a exceeds one of b, ties counting half),
// z its normal approximation with the tie correction (no continuity
// correction), and p the two-sided p-value. Tied values get their mid-rank.
func mannWhitney(a, b []float64) (u, z, p float64) {
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int { return cmp.Compare(x.v, y.v) })
	var rankSumA, tieSum float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+1+j) / 2 // the mean of ranks i+1 … j
		t := float64(j - i)
		tieSum += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankSumA += rank
			}
		}
		i = j
	}
	n1, n2, n := float64(len(a)), float64(len(b)), float64(len(all))
	u = rankSumA - n1*(n1+1)/2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tieSum/(n*(n-1))))
	z = (u - n1*n2/2) / sigma
	return u, z, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// shift returns the Hodges-Lehmann estimate of how much a's values exceed
// b's: the median of every difference a[i] − b[j]. It is the size of the
// difference whose presence the U test judges.
func shift(a, b []float64) float64 {
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, x-y)
		}
	}
	return median(d)
}

// Ensure the shift estimate is the median of the pairwise differences:
// {1, 2, 10} − {0, 1} has differences 1, 0, 2, 1, 10, 9, whose median is 1.5,
// and a sample shifted by a constant is estimated at that constant.
func TestShift_known_examples(t *testing.T) {
	t.Parallel()
	if got := shift([]float64{1, 2, 10}, []float64{0, 1}); got != 1.5 {
		t.Errorf("shift = %v, want 1.5", got)
	}
	b := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	a := make([]float64, len(b))
	for i, v := range b {
		a[i] = v + 0.25
	}
	if got := shift(a, b); got != 0.25 {
		t.Errorf("shift of a sample moved by 0.25 = %v, want 0.25", got)
	}
}

// Ensure the U test matches worked examples: two samples that do not
// overlap, and one with ties, whose U was counted pair by pair (4 × 4 pairs:
// 0 + 0.5 + 0.5 + 1.5) and whose variance was worked out by hand with the tie
// correction (groups of 3 and 2 tied values: 16/12 × (9 − 30/56)).
func TestMannWhitney_known_examples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a, b    []float64
		u, z, p float64
	}{
		{"no_overlap", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, -2.6111648393354674, 0.009023438818080334},
		{"ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 5}, 2.5, -1.6371865339158649, 0.1015914998616528},
		// Every value tied: no spread, so no z (NaN), which never fails a test.
		{"identical", []float64{3, 3, 3}, []float64{3, 3, 3, 3}, 6, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, z, p := mannWhitney(tt.a, tt.b)
			if u != tt.u {
				t.Errorf("U = %v, want %v", u, tt.u)
			}
			near := func(got, want float64) bool {
				return (math.IsNaN(want) && math.IsNaN(got)) || math.Abs(got-want) < 1e-12
			}
			if !near(z, tt.z) || !near(p, tt.p) {
				t.Errorf("z, p = %v, %v; want %v, %v", z, p, tt.z, tt.p)
			}
			// U of a and U of b add up to n1·n2, and z changes sign.
			u2, z2, p2 := mannWhitney(tt.b, tt.a)
			if got, want := u+u2, float64(len(tt.a)*len(tt.b)); got != want {
				t.Errorf("U(a,b) + U(b,a) = %v, want %v", got, want)
			}
			if !near(z2, -tt.z) || !near(p2, tt.p) {
				t.Errorf("swapped: z, p = %v, %v; want %v, %v", z2, p2, -tt.z, tt.p)
			}
		})
	}
}
