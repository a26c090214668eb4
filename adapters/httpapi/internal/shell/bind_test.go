package shell

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

type testQuery struct {
	Q     string `query:"q" validate:"maxbytes=4"`
	By    string `query:"by" validate:"omitempty,oneof=email name"`
	Limit *int   `query:"limit" validate:"omitempty,min=1,max=100"`
	Free  string `query:"free"`
	Trim  string `query:"trim,trim" validate:"maxbytes=3"`
	At    string `query:"at" validate:"maxbytes=64,instant"`
}

func testContext(target string) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("GET", target, nil)
	return c
}

// Ensure the binder fills the struct from the query and names each
// malformed part as the APIs do (query.<name>), in the struct's order.
func TestBindQuery(t *testing.T) {
	tests := []struct {
		name, target string
		want         []string // locations
	}{
		{"good", "/x?q=abcd&by=name&limit=5&free=anything", nil},
		{"empty", "/x", nil},
		{"too_long_in_bytes", "/x?q=" + strings.Repeat("é", 3), []string{"query.q"}},
		{"not_one_of", "/x?by=phone", []string{"query.by"}},
		{"every_part_in_order", "/x?limit=x&by=phone&q=abcde", []string{"query.q", "query.by", "query.limit"}},
		{"out_of_range", "/x?limit=0", []string{"query.limit"}},
		{"too_big", "/x?limit=101", []string{"query.limit"}},
		{"trimmed_before_checks", "/x?trim=%20abc%20", nil},
		{"trimmed_too_long", "/x?trim=abcd", []string{"query.trim"}},
		{"instants", "/x?at=2026-01-31T12:00:00Z", nil},
		{"local_instant", "/x?at=2026-01-31T12:00", nil},
		{"date", "/x?at=2026-01-31", nil},
		{"not_an_instant", "/x?at=yesterday", []string{"query.at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q testQuery
			vs := BindQuery(testContext(tt.target), &q)
			var got []string
			for _, v := range vs {
				got = append(got, v.Location)
				if v.Name != strings.TrimPrefix(v.Location, "query.") || v.Message == "" {
					t.Fatalf("violation %+v", v)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("violations %v, want %v", got, tt.want)
			}
		})
	}
	var q testQuery
	BindQuery(testContext("/x?q=ab&free=f%20g&limit=7&trim=%20t%20"), &q)
	if q.Q != "ab" || q.Free != "f g" || q.Limit == nil || *q.Limit != 7 || q.Trim != "t" {
		t.Fatalf("bound %+v", q)
	}
}

type testForm struct {
	Picks []string `form:"picks" validate:"required,max=2"`
	On    bool     `form:"on"`
	Off   bool     `form:"off"`
}

// Ensure a form's checkboxes bind: every value sent under a shared name,
// in order, and a lone checkbox as checked when sent as "on".
func TestBindForm_checkboxes(t *testing.T) {
	c := testContext("/x")
	c.Request.PostForm = map[string][]string{"picks": {"a", "b"}, "on": {"on"}, "off": {"yes"}}
	var f testForm
	if vs := BindForm(c, &f); len(vs) != 0 {
		t.Fatalf("violations %+v", vs)
	}
	if strings.Join(f.Picks, ",") != "a,b" || !f.On || f.Off {
		t.Fatalf("bound %+v", f)
	}
	f.Picks[0] = "changed"
	if c.Request.PostForm["picks"][0] != "a" {
		t.Fatal("the bound values share the form's")
	}
	for _, tt := range []struct {
		name  string
		picks []string
		want  string
	}{{"none", nil, "expected a value"}, {"too_many", []string{"a", "b", "c"}, "expected array length <= 2"}} {
		t.Run(tt.name, func(t *testing.T) {
			c := testContext("/x")
			c.Request.PostForm = map[string][]string{"picks": tt.picks}
			var f testForm
			bad, invalid := BindForm(c, &f).First()
			if !invalid || bad.Location != "form.picks" || bad.Message != tt.want {
				t.Fatalf("violation %+v, want form.picks %q", bad, tt.want)
			}
		})
	}
}
