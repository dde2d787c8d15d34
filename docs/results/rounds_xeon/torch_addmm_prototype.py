"""A prototype, not in the library: under PyTorch, Keras's `EinsumDense`
(the attention's two projection equations) and `Dense` with a bias
through `torch.addmm`, the bias added inside the matrix product as the
reference's `nn.Linear` does. Imported by `torch_step_profile.py` with
ADDMM=1; it patches the two classes for that process."""

import keras
import torch

_einsum_dense_call = keras.layers.EinsumDense.call
_dense_call = keras.layers.Dense.call
_EQUATIONS = ("bld,dhk->blhk", "blhk,hkd->bld")


def _value(variable):
    return variable.value if hasattr(variable, "value") else variable


def einsum_dense_call(self, inputs, training=None):
    if self.bias is None or self.equation not in _EQUATIONS:
        return _einsum_dense_call(self, inputs, training)
    kernel, bias = _value(self.kernel), _value(self.bias)
    if self.equation == _EQUATIONS[0]:  # (b, l, d) -> (b, l, h, k)
        width = kernel.shape[0]
        out = torch.addmm(bias.reshape(-1), inputs.reshape(-1, width),
                          kernel.reshape(width, -1))
        return out.view(*inputs.shape[:2], *kernel.shape[1:])
    width = kernel.shape[0] * kernel.shape[1]  # (b, l, h, k) -> (b, l, d)
    out = torch.addmm(bias, inputs.reshape(-1, width),
                      kernel.reshape(width, -1))
    return out.view(*inputs.shape[:2], -1)


def dense_call(self, inputs, training=None):
    if (self.bias is None or self.lora_enabled or inputs.dim() != 3
            or getattr(self, "quantization_mode", None)):
        return _dense_call(self, inputs, training)
    out = torch.addmm(_value(self.bias), inputs.reshape(-1, inputs.shape[-1]),
                      _value(self.kernel))
    return self.activation(out.view(*inputs.shape[:2], -1))


keras.layers.EinsumDense.call = einsum_dense_call
keras.layers.Dense.call = dense_call
