"""qconv_ir.py - what the qconv test generators of this folder share
(gen_fire.py, gen_resblock.py, gen_convnext.py, gen_qconv_split.py,
gen_qconv_rows2.py, gen_qconv_pf.py): a quantized type's text, a batch-1
square tensor type, and a conv's constant weights and bias as textual IR,
drawn from the generator's own random.Random."""


def q(scale, zp, st="u8"):
    """The !quant.uniform type of storage st."""
    return "!quant.uniform<%s:f32, %s:%d>" % (st, scale, zp)


def t(c, hw, e):
    """The 1 x c x hw x hw tensor type of element type e."""
    return "tensor<1x%dx%dx%dx%s>" % (c, hw, hw, e)


def weights(rng, name, m, c, k):
    """Lines defining %name (m x c x k x k s8 weights, scale 0.004) and
    %bname (m i32 biases in [-2000, 2000))."""
    data = "".join("%02X" % rng.randrange(256) for _ in range(m * c * k * k))
    bias = ", ".join(str(rng.randrange(-2000, 2000)) for _ in range(m))
    wt = "tensor<%dx%dx%dx%dx%s>" % (m, c, k, k, q(0.004, 0, "i8"))
    return ['  %%%s = constant {value = dense<"0x%s"> : %s} : %s'
            % (name, data, wt, wt),
            "  %%b%s = constant {value = dense<[%s]> : tensor<%dxi32>} : "
            "tensor<%dxi32>" % (name, bias, m, m)]
