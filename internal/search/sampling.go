package search

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/spatial/r1"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"
)

// Sampling methods, by AIPerf's names.
const (
	MethodSobol          = "sobol"
	MethodLatinHypercube = "latin_hypercube"
)

// maxSobolDims is the most dimensions [Sobol] has direction numbers for.
const maxSobolDims = 12

// sobolDirections are Joe and Kuo's primitive polynomials and initial
// direction numbers (new-joe-kuo-6.21201) for dimensions 2 … 12: the
// polynomial's degree s, its coefficients a and the numbers m_1 … m_s.
// Dimension 1 is the van der Corput sequence.
var sobolDirections = [maxSobolDims - 1]struct {
	s, a int
	m    []uint32
}{
	{1, 0, []uint32{1}},
	{2, 1, []uint32{1, 3}},
	{3, 1, []uint32{1, 3, 1}},
	{3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}},
	{4, 4, []uint32{1, 3, 5, 13}},
	{5, 2, []uint32{1, 1, 5, 5, 17}},
	{5, 4, []uint32{1, 1, 5, 5, 5}},
	{5, 7, []uint32{1, 1, 7, 11, 19}},
	{5, 11, []uint32{1, 1, 5, 1, 1}},
	{5, 13, []uint32{1, 1, 1, 3, 11}},
}

// sobolBits is the precision of the generated points.
const sobolBits = 32

// sobolV returns the direction numbers v_1 … v_32 of dimension j (0-based),
// scaled to 32 bits.
func sobolV(j int) [sobolBits]uint32 {
	var v [sobolBits]uint32
	if j == 0 {
		for i := range v {
			v[i] = 1 << (sobolBits - 1 - i)
		}
		return v
	}
	d := sobolDirections[j-1]
	for i := 0; i < d.s; i++ {
		v[i] = d.m[i] << (sobolBits - 1 - i)
	}
	for i := d.s; i < sobolBits; i++ {
		x := v[i-d.s] ^ (v[i-d.s] >> d.s)
		for k := 1; k < d.s; k++ {
			if (d.a>>(d.s-1-k))&1 == 1 {
				x ^= v[i-k]
			}
		}
		v[i] = x
	}
	return v
}

// Sobol returns n points of the Sobol sequence in [0, 1)^dims (Gray-code
// order, starting at the origin), each dimension scrambled by a random
// digital shift drawn from seed (seed 0 leaves the sequence unshifted).
// A digital shift keeps the net property: the first 2^k points put one
// point in each of the 2^k intervals of every dimension. At most
// maxSobolDims (12) dimensions.
func Sobol(n, dims int, seed uint64) ([][]float64, error) {
	if dims < 1 || dims > maxSobolDims {
		return nil, fmt.Errorf("sobol: %d dimensions; want 1 … %d", dims, maxSobolDims)
	}
	if n < 1 {
		return nil, fmt.Errorf("sobol: %d samples; want ≥ 1", n)
	}
	vs := make([][sobolBits]uint32, dims)
	shift := make([]uint32, dims)
	rng := rand.New(rand.NewPCG(seed, 0x50b01))
	for j := range vs {
		vs[j] = sobolV(j)
		if seed != 0 {
			shift[j] = rng.Uint32()
		}
	}
	x := make([]uint32, dims)
	out := make([][]float64, n)
	for i := range n {
		if i > 0 {
			// Gray code: flip the direction number of the lowest zero bit
			// of i−1.
			c := 0
			for k := i - 1; k&1 == 1; k >>= 1 {
				c++
			}
			for j := range x {
				x[j] ^= vs[j][c]
			}
		}
		p := make([]float64, dims)
		for j := range p {
			p[j] = float64(x[j]^shift[j]) / (1 << sobolBits)
		}
		out[i] = p
	}
	return out, nil
}

// LatinHypercube returns n points in [0, 1)^dims, one in each of the n
// strata of every dimension, drawn from seed (gonum's samplemv).
func LatinHypercube(n, dims int, seed uint64) ([][]float64, error) {
	if dims < 1 || n < 1 {
		return nil, fmt.Errorf("latin hypercube: %d samples of %d dimensions; want ≥ 1 of each", n, dims)
	}
	bnds := make([]r1.Interval, dims)
	for i := range bnds {
		bnds[i] = r1.Interval{Min: 0, Max: 1}
	}
	src := rand.NewPCG(seed, 0x1a7)
	batch := mat.NewDense(n, dims, nil)
	samplemv.LatinHypercube{Q: distmv.NewUniform(bnds, src), Src: src}.Sample(batch)
	out := make([][]float64, n)
	for i := range out {
		out[i] = mat.Row(nil, i, batch)
	}
	return out, nil
}

// Design is a sampling design: sampling_design.json of a sampled sweep.
type Design struct {
	// Method is MethodSobol or MethodLatinHypercube; Seed its seed.
	Method     string      `json:"method"`
	Seed       uint64      `json:"seed"`
	Dimensions []Dimension `json:"dimensions"`
	// Unit are the points in [0, 1)^d; Points the settings they map to
	// (int dimensions rounded), in run order.
	Unit   [][]float64 `json:"unit"`
	Points [][]float64 `json:"points"`
}

// NewDesign draws n points of method over dims from seed.
func NewDesign(method string, n int, dims []Dimension, seed uint64) (*Design, error) {
	var unit [][]float64
	var err error
	switch method {
	case MethodSobol:
		unit, err = Sobol(n, len(dims), seed)
	case MethodLatinHypercube:
		unit, err = LatinHypercube(n, len(dims), seed)
	default:
		return nil, fmt.Errorf("sampling %q: want sobol or latin_hypercube", method)
	}
	if err != nil {
		return nil, err
	}
	d := &Design{Method: method, Seed: seed, Dimensions: dims, Unit: unit}
	for _, u := range unit {
		p := make([]float64, len(dims))
		for j, dim := range dims {
			p[j] = dim.At(u[j])
		}
		d.Points = append(d.Points, p)
	}
	return d, nil
}
