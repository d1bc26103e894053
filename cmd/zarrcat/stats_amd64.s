#include "textflag.h"

// func accumF32(p *float32, n int, shift float64, fill float32) (s, q float64, lo, hi float32, fills int64)
//
// Over the n values at p (n a multiple of 8, at most 1<<30): the sums of
// x-shift and of its square (in float64, two lanes of two), the smallest
// and largest value, and how many equal fill. SSE2 only (every amd64).
TEXT ·accumF32(SB), NOSPLIT, $0-64
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	MOVSD shift+16(FP), X10
	UNPCKLPD X10, X10
	MOVSS fill+24(FP), X8
	SHUFPS $0, X8, X8
	MOVL  $0x7f800000, AX
	MOVQ  AX, X6
	SHUFPS $0, X6, X6
	MOVL  $0xff800000, AX
	MOVQ  AX, X7
	SHUFPS $0, X7, X7
	PXOR  X9, X9
	XORPS X11, X11
	XORPS X12, X12
	XORPS X13, X13
	XORPS X14, X14
	SHRQ  $3, CX
	JZ    f32done

f32loop:
	MOVUPS (SI), X0
	MOVUPS 16(SI), X1
	MINPS  X0, X6
	MAXPS  X0, X7
	MINPS  X1, X6
	MAXPS  X1, X7
	MOVAPS X0, X2
	CMPPS  X8, X2, $0
	PSUBL  X2, X9
	MOVAPS X1, X3
	CMPPS  X8, X3, $0
	PSUBL  X3, X9

	CVTPS2PD X0, X4
	MOVHLPS  X0, X0
	CVTPS2PD X0, X5
	SUBPD    X10, X4
	SUBPD    X10, X5
	ADDPD    X4, X11
	ADDPD    X5, X12
	MULPD    X4, X4
	MULPD    X5, X5
	ADDPD    X4, X13
	ADDPD    X5, X14

	CVTPS2PD X1, X4
	MOVHLPS  X1, X1
	CVTPS2PD X1, X5
	SUBPD    X10, X4
	SUBPD    X10, X5
	ADDPD    X4, X11
	ADDPD    X5, X12
	MULPD    X4, X4
	MULPD    X5, X5
	ADDPD    X4, X13
	ADDPD    X5, X14

	ADDQ $32, SI
	DECQ CX
	JNZ  f32loop

f32done:
	ADDPD   X12, X11
	MOVHLPS X11, X0
	ADDSD   X0, X11
	MOVSD   X11, s+32(FP)
	ADDPD   X14, X13
	MOVHLPS X13, X0
	ADDSD   X0, X13
	MOVSD   X13, q+40(FP)

	MOVHLPS X6, X0
	MINPS   X0, X6
	MOVAPS  X6, X0
	SHUFPS  $0x55, X0, X0
	MINSS   X0, X6
	MOVSS   X6, lo+48(FP)
	MOVHLPS X7, X0
	MAXPS   X0, X7
	MOVAPS  X7, X0
	SHUFPS  $0x55, X0, X0
	MAXSS   X0, X7
	MOVSS   X7, hi+52(FP)

	PSHUFD $0x4e, X9, X0
	PADDL  X0, X9
	PSHUFD $0xb1, X9, X0
	PADDL  X0, X9
	MOVQ   X9, AX
	MOVL   AX, AX
	MOVQ   AX, fills+56(FP)
	RET

// func accumF64(p *float64, n int, shift float64, fill float64) (s, q, lo, hi float64, fills int64)
//
// accumF32 for float64 values (n a multiple of 4).
TEXT ·accumF64(SB), NOSPLIT, $0-72
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	MOVSD shift+16(FP), X10
	UNPCKLPD X10, X10
	MOVSD fill+24(FP), X8
	UNPCKLPD X8, X8
	MOVQ  $0x7ff0000000000000, AX
	MOVQ  AX, X6
	UNPCKLPD X6, X6
	MOVQ  $0xfff0000000000000, AX
	MOVQ  AX, X7
	UNPCKLPD X7, X7
	PXOR  X9, X9
	XORPS X11, X11
	XORPS X12, X12
	XORPS X13, X13
	XORPS X14, X14
	SHRQ  $2, CX
	JZ    f64done

f64loop:
	MOVUPD (SI), X0
	MOVUPD 16(SI), X1
	MINPD  X0, X6
	MAXPD  X0, X7
	MINPD  X1, X6
	MAXPD  X1, X7
	MOVAPD X0, X2
	CMPPD  X8, X2, $0
	PSUBQ  X2, X9
	MOVAPD X1, X3
	CMPPD  X8, X3, $0
	PSUBQ  X3, X9
	SUBPD  X10, X0
	SUBPD  X10, X1
	ADDPD  X0, X11
	ADDPD  X1, X12
	MULPD  X0, X0
	MULPD  X1, X1
	ADDPD  X0, X13
	ADDPD  X1, X14
	ADDQ   $32, SI
	DECQ   CX
	JNZ    f64loop

f64done:
	ADDPD   X12, X11
	MOVHLPS X11, X0
	ADDSD   X0, X11
	MOVSD   X11, s+32(FP)
	ADDPD   X14, X13
	MOVHLPS X13, X0
	ADDSD   X0, X13
	MOVSD   X13, q+40(FP)
	MOVHLPS X6, X0
	MINSD   X0, X6
	MOVSD   X6, lo+48(FP)
	MOVHLPS X7, X0
	MAXSD   X0, X7
	MOVSD   X7, hi+56(FP)
	PSHUFD  $0x4e, X9, X0
	PADDQ   X0, X9
	MOVQ    X9, fills+64(FP)
	RET
