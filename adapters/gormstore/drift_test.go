package gormstore_test

import (
	"sort"
	"strings"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// TestSchemaDrift proves that every row model matches the migrated schema on
// both dialects: the same columns (no more, no fewer), the same nullability,
// compatible types, and every declared unique index present.
func TestSchemaDrift(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		for _, model := range gormstore.RowModels() {
			stmt := &gorm.Statement{DB: db}
			if err := stmt.Parse(model); err != nil {
				t.Fatal(err)
			}
			t.Run(stmt.Schema.Table, func(t *testing.T) { checkTable(t, db, model, stmt.Schema) })
		}
	})
}

func checkTable(t *testing.T, db *gorm.DB, model any, s *schema.Schema) {
	m := db.Migrator()
	if !m.HasTable(model) {
		t.Fatalf("table %s is not in the migrated schema", s.Table)
	}
	cols, err := m.ColumnTypes(model)
	if err != nil {
		t.Fatal(err)
	}
	inDB := map[string]gorm.ColumnType{}
	for _, c := range cols {
		inDB[c.Name()] = c
	}
	inModel := map[string]bool{}
	for _, f := range s.Fields {
		if f.DBName == "" {
			continue
		}
		inModel[f.DBName] = true
		c, ok := inDB[f.DBName]
		if !ok {
			t.Errorf("%s.%s: in the model, not in the schema", s.Table, f.DBName)
			continue
		}
		if nullable, ok := c.Nullable(); ok && nullable == (f.NotNull || f.PrimaryKey) {
			t.Errorf("%s.%s: model not null=%v, schema nullable=%v", s.Table, f.DBName, f.NotNull || f.PrimaryKey, nullable)
		}
		if !compatible(f.DataType, c.DatabaseTypeName()) {
			t.Errorf("%s.%s: model type %s, schema type %s", s.Table, f.DBName, f.DataType, c.DatabaseTypeName())
		}
	}
	var extra []string
	for name := range inDB {
		if !inModel[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("%s: columns in the schema but not in the model: %v", s.Table, extra)
	}
	for _, idx := range s.ParseIndexes() {
		if !m.HasIndex(model, idx.Name) {
			t.Errorf("%s: index %s declared on the model is missing", s.Table, idx.Name)
		}
	}
}

// compatible reports whether a model field type can live in a column of the
// given database type.
func compatible(field schema.DataType, dbType string) bool {
	dbType = strings.ToLower(dbType)
	switch field {
	case schema.String:
		// jsonb columns (PostgreSQL) hold JSON text.
		return strings.Contains(dbType, "text") || strings.Contains(dbType, "char") || strings.Contains(dbType, "json")
	case schema.Bool:
		return strings.Contains(dbType, "bool")
	case schema.Int, schema.Uint:
		return strings.Contains(dbType, "int")
	case schema.Time:
		return strings.Contains(dbType, "timestamp") || strings.Contains(dbType, "datetime")
	case schema.Bytes:
		return strings.Contains(dbType, "blob") || strings.Contains(dbType, "bytea")
	}
	return true
}
