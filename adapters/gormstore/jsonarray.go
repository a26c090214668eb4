package gormstore

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// jsonArray is a column holding a JSON array: jsonb on PostgreSQL, text on
// SQLite. nil is written as [] and an empty array reads back as nil.
type jsonArray[T any] []T

// GormDataType names the column's type for gorm's schema.
func (jsonArray[T]) GormDataType() string { return "json" }

// Value implements driver.Valuer: the JSON text, which both dialects accept
// for their column type.
func (a jsonArray[T]) Value() (driver.Value, error) {
	if a == nil {
		a = jsonArray[T]{}
	}
	b, err := json.Marshal([]T(a))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (a *jsonArray[T]) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("gormstore: JSON array column: cannot scan %T", src)
	}
	if err := json.Unmarshal(b, (*[]T)(a)); err != nil {
		return err
	}
	if len(*a) == 0 {
		*a = nil
	}
	return nil
}
