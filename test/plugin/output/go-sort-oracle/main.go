// The oracle for test/plugin/output/go-sort.test.ts: Go's own sort.Sort with kubectl's --sort-by
// comparator (k8s.io/kubectl/pkg/cmd/get/sorter.go: an item without the field is "less" than any
// other, itself included). Reads a JSON array of cases (arrays of strings or nulls) on stdin and
// prints, for each, the original positions in sorted order.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

type data struct {
	keys []*string
	idx  []int
}

func (d *data) Len() int { return len(d.keys) }
func (d *data) Swap(i, j int) {
	d.keys[i], d.keys[j] = d.keys[j], d.keys[i]
	d.idx[i], d.idx[j] = d.idx[j], d.idx[i]
}
func (d *data) Less(i, j int) bool {
	if d.keys[i] == nil {
		return true
	}
	if d.keys[j] == nil {
		return false
	}
	return *d.keys[i] < *d.keys[j]
}

func main() {
	var cases [][]*string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := [][]int{}
	for _, keys := range cases {
		d := &data{keys: keys, idx: make([]int, len(keys))}
		for i := range d.idx {
			d.idx[i] = i
		}
		sort.Sort(d)
		out = append(out, d.idx)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}
