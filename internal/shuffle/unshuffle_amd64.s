//go:build !purego

#include "textflag.h"

// SSE2 (amd64 baseline, no CPU detection needed) byte unshuffle kernels.
// Each iteration reads 16 bytes from every stream (16 elements) and writes
// the 16 interleaved elements with unpack instructions.

// func unshuffle2SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle2SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	TESTQ CX, CX
	JE   done2

loop2:
	MOVOU (SI), X0
	MOVOU (SI)(DX*1), X1
	MOVO  X0, X2
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X2
	MOVOU X0, (DI)
	MOVOU X2, 16(DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNE  loop2

done2:
	RET

// func unshuffle4SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle4SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*2), R8
	TESTQ CX, CX
	JE   done4

loop4:
	MOVOU (SI), X0
	MOVOU (SI)(DX*1), X1
	MOVOU (R8), X2
	MOVOU (R8)(DX*1), X3
	MOVO  X0, X4
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X4
	MOVO  X2, X5
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X5
	MOVO  X0, X6
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X6
	MOVO  X4, X7
	PUNPCKLWL X5, X4
	PUNPCKHWL X5, X7
	MOVOU X0, (DI)
	MOVOU X6, 16(DI)
	MOVOU X4, 32(DI)
	MOVOU X7, 48(DI)
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $64, DI
	DECQ CX
	JNE  loop4

done4:
	RET

// func unshuffle8SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle8SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*2), R8
	ADDQ DX, R8            // R8 = src + 3n
	LEAQ (R8)(DX*2), R9
	ADDQ DX, R9            // R9 = src + 6n
	TESTQ CX, CX
	JE   done8

loop8:
	MOVOU (SI), X0
	MOVOU (SI)(DX*1), X1
	MOVOU (SI)(DX*2), X2
	MOVOU (R8), X3
	MOVOU (R8)(DX*1), X4
	MOVOU (R8)(DX*2), X5
	MOVOU (R9), X6
	MOVOU (R9)(DX*1), X7

	// byte pairs: X0/X8 streams 0-1, X2/X9 2-3, X4/X10 4-5, X6/X11 6-7
	MOVO X0, X8
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X8
	MOVO X2, X9
	PUNPCKLBW X3, X2
	PUNPCKHBW X3, X9
	MOVO X4, X10
	PUNPCKLBW X5, X4
	PUNPCKHBW X5, X10
	MOVO X6, X11
	PUNPCKLBW X7, X6
	PUNPCKHBW X7, X11

	// elements 0..7
	MOVO X0, X1
	PUNPCKLWL X2, X0
	PUNPCKHWL X2, X1
	MOVO X4, X3
	PUNPCKLWL X6, X4
	PUNPCKHWL X6, X3
	MOVO X0, X2
	PUNPCKLLQ X4, X0
	PUNPCKHLQ X4, X2
	MOVO X1, X5
	PUNPCKLLQ X3, X1
	PUNPCKHLQ X3, X5
	MOVOU X0, (DI)
	MOVOU X2, 16(DI)
	MOVOU X1, 32(DI)
	MOVOU X5, 48(DI)

	// elements 8..15
	MOVO X8, X0
	PUNPCKLWL X9, X8
	PUNPCKHWL X9, X0
	MOVO X10, X1
	PUNPCKLWL X11, X10
	PUNPCKHWL X11, X1
	MOVO X8, X2
	PUNPCKLLQ X10, X8
	PUNPCKHLQ X10, X2
	MOVO X0, X3
	PUNPCKLLQ X1, X0
	PUNPCKHLQ X1, X3
	MOVOU X8, 64(DI)
	MOVOU X2, 80(DI)
	MOVOU X0, 96(DI)
	MOVOU X3, 112(DI)

	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $128, DI
	DECQ CX
	JNE  loop8

done8:
	RET
