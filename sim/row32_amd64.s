#include "textflag.h"

// func residualBlocks32AVX2(w float32, p, q, sums []float32) float64
//
// For every block b of 64 entries, sums[b] = Σ_j (w·p_j - min(w·p_j, q_j)),
// and the return value is Σ_b sums[b] accumulated in float64. The caller
// guarantees len(p) >= 64·len(sums) and len(q) >= len(p). Entries are
// non-negative and finite (validated rows), so VMINPS needs no NaN care.
TEXT ·residualBlocks32AVX2(SB), NOSPLIT, $0-88
	VBROADCASTSS w+0(FP), Y15
	MOVQ p_base+8(FP), SI
	MOVQ q_base+32(FP), DI
	MOVQ sums_base+56(FP), DX
	MOVQ sums_len+64(FP), CX
	VXORPD X14, X14, X14
	TESTQ CX, CX
	JE done

loop:
	VMULPS 0(SI), Y15, Y0
	VMULPS 32(SI), Y15, Y1
	VMULPS 64(SI), Y15, Y2
	VMULPS 96(SI), Y15, Y3
	VMULPS 128(SI), Y15, Y4
	VMULPS 160(SI), Y15, Y5
	VMULPS 192(SI), Y15, Y6
	VMULPS 224(SI), Y15, Y7
	VMINPS 0(DI), Y0, Y8
	VMINPS 32(DI), Y1, Y9
	VMINPS 64(DI), Y2, Y10
	VMINPS 96(DI), Y3, Y11
	VSUBPS Y8, Y0, Y0
	VSUBPS Y9, Y1, Y1
	VSUBPS Y10, Y2, Y2
	VSUBPS Y11, Y3, Y3
	VMINPS 128(DI), Y4, Y8
	VMINPS 160(DI), Y5, Y9
	VMINPS 192(DI), Y6, Y10
	VMINPS 224(DI), Y7, Y11
	VSUBPS Y8, Y4, Y4
	VSUBPS Y9, Y5, Y5
	VSUBPS Y10, Y6, Y6
	VSUBPS Y11, Y7, Y7
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y2, Y0, Y0
	VADDPS Y6, Y4, Y4
	VADDPS Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, (DX)
	VCVTSS2SD X0, X0, X0
	VADDSD X0, X14, X14
	ADDQ $256, SI
	ADDQ $256, DI
	ADDQ $4, DX
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	VMOVSD X14, ret+80(FP)
	RET
