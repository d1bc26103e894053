//go:build !purego

#include "textflag.h"

// func transposeBitsSSE2(p *byte, n int)
// Transposes, in place, the 8x8 bit matrix of each of the 2n little-endian
// 64-bit words at p (n 16-byte vectors): bit k of byte i moves to bit i of
// byte k, in three rounds of masked shift-and-swap.
TEXT ·transposeBitsSSE2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ $0x00AA00AA00AA00AA, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8
	MOVQ $0x0000CCCC0000CCCC, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9
	MOVQ $0x00000000F0F0F0F0, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10
	TESTQ CX, CX
	JE   donetb

looptb:
	MOVOU (DI), X0
	MOVO  X0, X1
	PSRLQ $7, X1
	PXOR  X0, X1
	PAND  X8, X1
	PXOR  X1, X0
	PSLLQ $7, X1
	PXOR  X1, X0

	MOVO  X0, X1
	PSRLQ $14, X1
	PXOR  X0, X1
	PAND  X9, X1
	PXOR  X1, X0
	PSLLQ $14, X1
	PXOR  X1, X0

	MOVO  X0, X1
	PSRLQ $28, X1
	PXOR  X0, X1
	PAND  X10, X1
	PXOR  X1, X0
	PSLLQ $28, X1
	PXOR  X1, X0
	MOVOU X0, (DI)
	ADDQ $16, DI
	DECQ CX
	JNE  looptb

donetb:
	RET
