package zfp

// The decorrelating transforms of blocks of 1 to 4 dimensions, one loop
// per axis with constant strides (generic loops over line tables cost
// twice as much). A block of d dimensions is the first 4^d values of p;
// the line along axis a starting at i is i, i+s, i+2s, i+3s with s = 4^a.

// fwdXform is the forward decorrelating transform of a block of d
// dimensions: along x, y, z, w in turn.
func fwdXform[I signed](p *[256]I, d int) {
	switch d {
	case 1:
		p[0], p[1], p[2], p[3] = lift4(p[0], p[1], p[2], p[3])
	case 2:
		fwdXform2(p)
	case 3:
		fwdXform3(p)
	default:
		fwdXform4(p)
	}
}

// invXform inverts fwdXform (up to the bits the forward shifts dropped):
// along w, z, y, x in turn.
func invXform[I signed](p *[256]I, d int) {
	switch d {
	case 1:
		p[0], p[1], p[2], p[3] = ilift4(p[0], p[1], p[2], p[3])
	case 2:
		invXform2(p)
	case 3:
		invXform3(p)
	default:
		invXform4(p)
	}
}

func fwdXform2[I signed](p *[256]I) {
	q := (*[16]I)(p[:16])
	for i := 0; i < 16; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = lift4(q[i], q[i+1], q[i+2], q[i+3])
	}
	for i := 0; i < 4; i++ {
		q[i], q[i+4], q[i+8], q[i+12] = lift4(q[i], q[i+4], q[i+8], q[i+12])
	}
}

func fwdXform3[I signed](p *[256]I) {
	q := (*[64]I)(p[:64])
	for i := 0; i < 64; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = lift4(q[i], q[i+1], q[i+2], q[i+3])
	}
	for h := 0; h < 64; h += 16 {
		for i := h; i < h+4; i++ {
			q[i], q[i+4], q[i+8], q[i+12] = lift4(q[i], q[i+4], q[i+8], q[i+12])
		}
	}
	for i := 0; i < 16; i++ {
		q[i], q[i+16], q[i+32], q[i+48] = lift4(q[i], q[i+16], q[i+32], q[i+48])
	}
}

func fwdXform4[I signed](p *[256]I) {
	q := (*[256]I)(p[:256])
	for i := 0; i < 256; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = lift4(q[i], q[i+1], q[i+2], q[i+3])
	}
	for h := 0; h < 256; h += 16 {
		for i := h; i < h+4; i++ {
			q[i], q[i+4], q[i+8], q[i+12] = lift4(q[i], q[i+4], q[i+8], q[i+12])
		}
	}
	for h := 0; h < 256; h += 64 {
		for i := h; i < h+16; i++ {
			q[i], q[i+16], q[i+32], q[i+48] = lift4(q[i], q[i+16], q[i+32], q[i+48])
		}
	}
	for i := 0; i < 64; i++ {
		q[i], q[i+64], q[i+128], q[i+192] = lift4(q[i], q[i+64], q[i+128], q[i+192])
	}
}

func invXform2[I signed](p *[256]I) {
	q := (*[16]I)(p[:16])
	for i := 0; i < 4; i++ {
		q[i], q[i+4], q[i+8], q[i+12] = ilift4(q[i], q[i+4], q[i+8], q[i+12])
	}
	for i := 0; i < 16; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = ilift4(q[i], q[i+1], q[i+2], q[i+3])
	}
}

func invXform3[I signed](p *[256]I) {
	q := (*[64]I)(p[:64])
	for i := 0; i < 16; i++ {
		q[i], q[i+16], q[i+32], q[i+48] = ilift4(q[i], q[i+16], q[i+32], q[i+48])
	}
	for h := 0; h < 64; h += 16 {
		for i := h; i < h+4; i++ {
			q[i], q[i+4], q[i+8], q[i+12] = ilift4(q[i], q[i+4], q[i+8], q[i+12])
		}
	}
	for i := 0; i < 64; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = ilift4(q[i], q[i+1], q[i+2], q[i+3])
	}
}

func invXform4[I signed](p *[256]I) {
	q := (*[256]I)(p[:256])
	for i := 0; i < 64; i++ {
		q[i], q[i+64], q[i+128], q[i+192] = ilift4(q[i], q[i+64], q[i+128], q[i+192])
	}
	for h := 0; h < 256; h += 64 {
		for i := h; i < h+16; i++ {
			q[i], q[i+16], q[i+32], q[i+48] = ilift4(q[i], q[i+16], q[i+32], q[i+48])
		}
	}
	for h := 0; h < 256; h += 16 {
		for i := h; i < h+4; i++ {
			q[i], q[i+4], q[i+8], q[i+12] = ilift4(q[i], q[i+4], q[i+8], q[i+12])
		}
	}
	for i := 0; i < 256; i += 4 {
		q[i], q[i+1], q[i+2], q[i+3] = ilift4(q[i], q[i+1], q[i+2], q[i+3])
	}
}
