//go:build !purego

#include "textflag.h"

// func unshuffle2SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle2SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*1), R8
	XORQ AX, AX
loop2:
	TESTQ CX, CX
	JZ   done2
	MOVOU (SI)(AX*1), X0
	MOVOU (R8)(AX*1), X1
	MOVO X0, X2
	PUNPCKLBW X1, X0
	PUNPCKHBW X1, X2
	MOVOU X0, (DI)
	MOVOU X2, 16(DI)
	ADDQ $16, AX
	ADDQ $32, DI
	DECQ CX
	JMP  loop2
done2:
	RET

// func unshuffle4SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle4SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	XORQ AX, AX
loop4:
	TESTQ CX, CX
	JZ   done4
	MOVOU (SI)(AX*1), X0  // byte 0 of elements 0..15
	MOVOU (R8)(AX*1), X1  // byte 1
	MOVOU (R9)(AX*1), X2  // byte 2
	MOVOU (R10)(AX*1), X3 // byte 3
	MOVO X0, X4
	PUNPCKLBW X1, X0      // bytes 0,1 of elements 0..7
	PUNPCKHBW X1, X4      // bytes 0,1 of elements 8..15
	MOVO X2, X5
	PUNPCKLBW X3, X2      // bytes 2,3 of elements 0..7
	PUNPCKHBW X3, X5      // bytes 2,3 of elements 8..15
	MOVO X0, X6
	PUNPCKLWL X2, X0      // elements 0..3
	PUNPCKHWL X2, X6      // elements 4..7
	MOVO X4, X7
	PUNPCKLWL X5, X4      // elements 8..11
	PUNPCKHWL X5, X7      // elements 12..15
	MOVOU X0, (DI)
	MOVOU X6, 16(DI)
	MOVOU X4, 32(DI)
	MOVOU X7, 48(DI)
	ADDQ $16, AX
	ADDQ $64, DI
	DECQ CX
	JMP  loop4
done4:
	RET

// func unshuffle8SSE2(dst, src *byte, n, blocks int)
TEXT ·unshuffle8SSE2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ blocks+24(FP), CX
	XORQ AX, AX
loop8:
	TESTQ CX, CX
	JZ   done8
	// Planes 0..7 at SI + j*n + AX.
	MOVQ SI, R8
	ADDQ AX, R8
	MOVOU (R8), X0
	ADDQ DX, R8
	MOVOU (R8), X1
	ADDQ DX, R8
	MOVOU (R8), X2
	ADDQ DX, R8
	MOVOU (R8), X3
	ADDQ DX, R8
	MOVOU (R8), X4
	ADDQ DX, R8
	MOVOU (R8), X5
	ADDQ DX, R8
	MOVOU (R8), X6
	ADDQ DX, R8
	MOVOU (R8), X7
	// bytes: (0,1) (2,3) (4,5) (6,7), low and high halves
	MOVO X0, X8
	PUNPCKLBW X1, X0  // 01 of elements 0..7
	PUNPCKHBW X1, X8  // 01 of elements 8..15
	MOVO X2, X9
	PUNPCKLBW X3, X2  // 23 of 0..7
	PUNPCKHBW X3, X9  // 23 of 8..15
	MOVO X4, X10
	PUNPCKLBW X5, X4  // 45 of 0..7
	PUNPCKHBW X5, X10 // 45 of 8..15
	MOVO X6, X11
	PUNPCKLBW X7, X6  // 67 of 0..7
	PUNPCKHBW X7, X11 // 67 of 8..15
	// words: 0123 and 4567, elements 0..7
	MOVO X0, X1
	PUNPCKLWL X2, X0  // 0123 of 0..3
	PUNPCKHWL X2, X1  // 0123 of 4..7
	MOVO X4, X3
	PUNPCKLWL X6, X4  // 4567 of 0..3
	PUNPCKHWL X6, X3  // 4567 of 4..7
	// dwords: elements 0..7
	MOVO X0, X2
	PUNPCKLLQ X4, X0  // elements 0,1
	PUNPCKHLQ X4, X2  // elements 2,3
	MOVO X1, X5
	PUNPCKLLQ X3, X1  // elements 4,5
	PUNPCKHLQ X3, X5  // elements 6,7
	MOVOU X0, (DI)
	MOVOU X2, 16(DI)
	MOVOU X1, 32(DI)
	MOVOU X5, 48(DI)
	// elements 8..15
	MOVO X8, X0
	PUNPCKLWL X9, X8  // 0123 of 8..11
	PUNPCKHWL X9, X0  // 0123 of 12..15
	MOVO X10, X1
	PUNPCKLWL X11, X10 // 4567 of 8..11
	PUNPCKHWL X11, X1  // 4567 of 12..15
	MOVO X8, X2
	PUNPCKLLQ X10, X8 // elements 8,9
	PUNPCKHLQ X10, X2 // elements 10,11
	MOVO X0, X3
	PUNPCKLLQ X1, X0  // elements 12,13
	PUNPCKHLQ X1, X3  // elements 14,15
	MOVOU X8, 64(DI)
	MOVOU X2, 80(DI)
	MOVOU X0, 96(DI)
	MOVOU X3, 112(DI)
	ADDQ $16, AX
	ADDQ $128, DI
	DECQ CX
	JMP  loop8
done8:
	RET
