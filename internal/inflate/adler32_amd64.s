//go:build !purego

#include "textflag.h"

// Byte weights 32, 31, ..., 1 and sixteen int16 ones.
DATA weights<>+0(SB)/8, $0x191a1b1c1d1e1f20
DATA weights<>+8(SB)/8, $0x1112131415161718
DATA weights<>+16(SB)/8, $0x090a0b0c0d0e0f10
DATA weights<>+24(SB)/8, $0x0102030405060708
GLOBL weights<>(SB), RODATA|NOPTR, $32
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// func adlerBlock(p []byte) (sum, weighted uint64)
//
// For 32-byte chunks c_0..c_{m-1}: sum = Σ S_j (S_j the byte sum of c_j,
// VPSADBW) and weighted = 32·Σ_j P_j + Σ_j dot(c_j) where P_j is the sum
// of the chunks before c_j and dot weights a chunk's bytes 32..1
// (VPMADDUBSW, then VPMADDWD to 32-bit lanes).
TEXT ·adlerBlock(SB), NOSPLIT, $0-40
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	VPXOR Y0, Y0, Y0 // chunk sums so far, 4 x u64
	VPXOR Y1, Y1, Y1 // Σ P_j, 4 x u64
	VPXOR Y2, Y2, Y2 // Σ dot, 8 x u32
	VPXOR Y7, Y7, Y7
	VMOVDQU weights<>(SB), Y5
	VMOVDQU ones16<>(SB), Y6
	SHRQ $5, CX
	JZ   done

loop:
	VMOVDQU   (SI), Y3
	VPADDQ    Y0, Y1, Y1
	VPSADBW   Y7, Y3, Y4
	VPADDQ    Y4, Y0, Y0
	VPMADDUBSW Y5, Y3, Y4
	VPMADDWD  Y6, Y4, Y4
	VPADDD    Y4, Y2, Y2
	ADDQ      $32, SI
	DECQ      CX
	JNZ       loop

done:
	VEXTRACTI128 $1, Y0, X3
	VPADDQ       X3, X0, X0
	VPSHUFD      $0x4e, X0, X3
	VPADDQ       X3, X0, X0
	VMOVQ        X0, AX

	VEXTRACTI128 $1, Y1, X3
	VPADDQ       X3, X1, X1
	VPSHUFD      $0x4e, X1, X3
	VPADDQ       X3, X1, X1
	VMOVQ        X1, BX

	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VPSHUFD      $0x4e, X2, X3
	VPADDD       X3, X2, X2
	VPSHUFD      $0xb1, X2, X3
	VPADDD       X3, X2, X2
	VMOVD        X2, DX

	VZEROUPPER
	SHLQ $5, BX
	ADDQ DX, BX
	MOVQ AX, sum+24(FP)
	MOVQ BX, weighted+32(FP)
	RET
