//go:build !purego

#include "textflag.h"

// F32RESULTS stores the results of accumF32 and accumF32AVX2 from their
// two-lane sums (X11, X13) and four-lane extremes (X6, X7), and returns.
#define F32RESULTS \
	MOVHLPS X11, X0 \
	ADDSD   X0, X11 \
	MOVSD   X11, s+24(FP) \
	MOVHLPS X13, X0 \
	ADDSD   X0, X13 \
	MOVSD   X13, q+32(FP) \
	MOVHLPS X6, X0 \
	MINPS   X0, X6 \
	MOVAPS  X6, X0 \
	SHUFPS  $0x55, X0, X0 \
	MINSS   X0, X6 \
	MOVSS   X6, lo+40(FP) \
	MOVHLPS X7, X0 \
	MAXPS   X0, X7 \
	MOVAPS  X7, X0 \
	SHUFPS  $0x55, X0, X0 \
	MAXSS   X0, X7 \
	MOVSS   X7, hi+44(FP) \
	RET

// func accumF32(p *float32, n int, shift float64) (s, q float64, lo, hi float32)
//
// Over the n values at p (n a multiple of 8): the sums of x-shift and of
// its square, in float64 (four lanes of two, and two), and the smallest and
// largest value. SSE2 only, as every amd64 has. A NaN makes the sums NaN;
// the caller then takes the slow path.
TEXT ·accumF32(SB), NOSPLIT, $0-48
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	MOVSD shift+16(FP), X10
	UNPCKLPD X10, X10
	MOVL  $0x7f800000, AX
	MOVQ  AX, X6
	SHUFPS $0, X6, X6
	MOVL  $0xff800000, AX
	MOVQ  AX, X7
	SHUFPS $0, X7, X7
	XORPS X8, X8
	XORPS X9, X9
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
	CVTPS2PD (SI), X4
	CVTPS2PD 8(SI), X5
	CVTPS2PD 16(SI), X2
	CVTPS2PD 24(SI), X3
	SUBPD    X10, X4
	SUBPD    X10, X5
	SUBPD    X10, X2
	SUBPD    X10, X3
	ADDPD    X4, X11
	ADDPD    X5, X12
	ADDPD    X2, X8
	ADDPD    X3, X9
	MULPD    X4, X4
	MULPD    X5, X5
	MULPD    X2, X2
	MULPD    X3, X3
	ADDPD    X4, X13
	ADDPD    X5, X14
	ADDPD    X2, X13
	ADDPD    X3, X14
	ADDQ $32, SI
	DECQ CX
	JNZ  f32loop

f32done:
	ADDPD X8, X11
	ADDPD X9, X12
	ADDPD X12, X11
	ADDPD X14, X13
	F32RESULTS

// func accumF64(p *float64, n int, shift float64) (s, q, lo, hi float64)
//
// accumF32 for float64 values (n a multiple of 8).
TEXT ·accumF64(SB), NOSPLIT, $0-56
	MOVQ  p+0(FP), SI
	MOVQ  n+8(FP), CX
	MOVSD shift+16(FP), X10
	UNPCKLPD X10, X10
	MOVQ  $0x7ff0000000000000, AX
	MOVQ  AX, X6
	UNPCKLPD X6, X6
	MOVAPD X6, X8
	MOVQ  $0xfff0000000000000, AX
	MOVQ  AX, X7
	UNPCKLPD X7, X7
	MOVAPD X7, X9
	XORPS X11, X11
	XORPS X12, X12
	XORPS X13, X13
	XORPS X14, X14
	SHRQ  $3, CX
	JZ    f64done

f64loop:
	MOVUPD (SI), X0
	MOVUPD 16(SI), X1
	MOVUPD 32(SI), X2
	MOVUPD 48(SI), X3
	MINPD  X0, X6
	MAXPD  X0, X7
	MINPD  X1, X8
	MAXPD  X1, X9
	MINPD  X2, X6
	MAXPD  X2, X7
	MINPD  X3, X8
	MAXPD  X3, X9
	SUBPD  X10, X0
	SUBPD  X10, X1
	SUBPD  X10, X2
	SUBPD  X10, X3
	ADDPD  X0, X11
	ADDPD  X1, X12
	ADDPD  X2, X11
	ADDPD  X3, X12
	MULPD  X0, X0
	MULPD  X1, X1
	MULPD  X2, X2
	MULPD  X3, X3
	ADDPD  X0, X13
	ADDPD  X1, X14
	ADDPD  X2, X13
	ADDPD  X3, X14
	ADDQ   $64, SI
	DECQ   CX
	JNZ    f64loop

f64done:
	ADDPD   X12, X11
	MOVHLPS X11, X0
	ADDSD   X0, X11
	MOVSD   X11, s+24(FP)
	ADDPD   X14, X13
	MOVHLPS X13, X0
	ADDSD   X0, X13
	MOVSD   X13, q+32(FP)
	MINPD   X8, X6
	MOVHLPS X6, X0
	MINSD   X0, X6
	MOVSD   X6, lo+40(FP)
	MAXPD   X9, X7
	MOVHLPS X7, X0
	MAXSD   X0, X7
	MOVSD   X7, hi+48(FP)
	RET

// func countF32(p *float32, n int, fill float32) int64
//
// How many of the n values at p (n a multiple of 8, at most 1<<32) equal
// fill, as Go's == compares them (-0 equals 0, NaN nothing).
TEXT ·countF32(SB), NOSPLIT, $0-32
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	MOVSS  fill+16(FP), X8
	SHUFPS $0, X8, X8
	PXOR   X9, X9
	SHRQ   $3, CX
	JZ     c32done

c32loop:
	MOVUPS (SI), X0
	MOVUPS 16(SI), X1
	CMPPS  X8, X0, $0
	CMPPS  X8, X1, $0
	PADDL  X1, X0
	PSUBL  X0, X9
	ADDQ   $32, SI
	DECQ   CX
	JNZ    c32loop

c32done:
	PSHUFD $0x4e, X9, X0
	PADDL  X0, X9
	PSHUFD $0xb1, X9, X0
	PADDL  X0, X9
	MOVQ   X9, AX
	MOVL   AX, AX
	MOVQ   AX, ret+24(FP)
	RET

// func countF64(p *float64, n int, fill float64) int64
//
// countF32 for float64 values (n a multiple of 4).
TEXT ·countF64(SB), NOSPLIT, $0-32
	MOVQ     p+0(FP), SI
	MOVQ     n+8(FP), CX
	MOVSD    fill+16(FP), X8
	UNPCKLPD X8, X8
	PXOR     X9, X9
	SHRQ     $2, CX
	JZ       c64done

c64loop:
	MOVUPD (SI), X0
	MOVUPD 16(SI), X1
	CMPPD  X8, X0, $0
	CMPPD  X8, X1, $0
	PADDQ  X1, X0
	PSUBQ  X0, X9
	ADDQ   $32, SI
	DECQ   CX
	JNZ    c64loop

c64done:
	PSHUFD $0x4e, X9, X0
	PADDQ  X0, X9
	MOVQ   X9, ret+24(FP)
	RET

// func accumF32AVX2(p *float32, n int, shift float64) (s, q float64, lo, hi float32)
//
// accumF32 with AVX2 and FMA (n a multiple of 16): four float64 lanes per
// register, squares of two deviations summed by one FMA before they join
// the running sums, so every running sum takes one addition per 16 values.
TEXT ·accumF32AVX2(SB), NOSPLIT, $0-48
	MOVQ         p+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD shift+16(FP), Y10
	MOVL         $0x7f800000, AX
	MOVQ         AX, X6
	VBROADCASTSS X6, Y6
	MOVL         $0xff800000, AX
	MOVQ         AX, X7
	VBROADCASTSS X7, Y7
	VXORPD       Y11, Y11, Y11
	VXORPD       Y12, Y12, Y12
	VXORPD       Y13, Y13, Y13
	VXORPD       Y14, Y14, Y14
	SHRQ         $4, CX
	JZ           a32done

a32loop:
	VMOVUPS     (SI), Y0
	VMOVUPS     32(SI), Y1
	VMINPS      Y0, Y6, Y6
	VMAXPS      Y0, Y7, Y7
	VMINPS      Y1, Y6, Y6
	VMAXPS      Y1, Y7, Y7
	VCVTPS2PD   (SI), Y2
	VCVTPS2PD   16(SI), Y3
	VCVTPS2PD   32(SI), Y4
	VCVTPS2PD   48(SI), Y5
	VSUBPD      Y10, Y2, Y2
	VSUBPD      Y10, Y3, Y3
	VSUBPD      Y10, Y4, Y4
	VSUBPD      Y10, Y5, Y5
	VMULPD      Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y0
	VMULPD      Y4, Y4, Y1
	VFMADD231PD Y5, Y5, Y1
	VADDPD      Y0, Y13, Y13
	VADDPD      Y1, Y14, Y14
	VADDPD      Y3, Y2, Y2
	VADDPD      Y5, Y4, Y4
	VADDPD      Y2, Y11, Y11
	VADDPD      Y4, Y12, Y12
	ADDQ        $64, SI
	DECQ        CX
	JNZ         a32loop

a32done:
	VADDPD       Y12, Y11, Y11
	VEXTRACTF128 $1, Y11, X0
	VADDPD       X0, X11, X11
	VADDPD       Y14, Y13, Y13
	VEXTRACTF128 $1, Y13, X1
	VADDPD       X1, X13, X13
	VEXTRACTF128 $1, Y6, X0
	VMINPS       X0, X6, X6
	VEXTRACTF128 $1, Y7, X1
	VMAXPS       X1, X7, X7
	VZEROUPPER
	F32RESULTS
