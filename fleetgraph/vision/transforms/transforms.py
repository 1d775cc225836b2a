"""`paddle.vision.transforms.transforms`: Paddle 2.0's transform classes over the functional module.
A transform applies to the keys it was built for ('image' by default) of a tuple input, and passes the rest.
As Paddle 2.0's, the classes take no backend argument: the functional module picks Pillow for a PIL image
and the OpenCV arithmetic for a NumPy array, so a transform gives back the kind of image it was given."""

from __future__ import annotations

import math
import numbers
import random
import traceback
from collections.abc import Iterable, Sequence

import numpy as np

from . import functional as F

__all__ = [
    "BaseTransform", "Compose", "Resize", "RandomResizedCrop", "CenterCrop", "RandomHorizontalFlip",
    "RandomVerticalFlip", "Transpose", "Normalize", "BrightnessTransform", "SaturationTransform",
    "ContrastTransform", "HueTransform", "ColorJitter", "RandomCrop", "Pad", "RandomRotation", "Grayscale",
    "ToTensor",
]  # fmt: skip


def _get_image_size(img) -> tuple[int, int]:
    """(width, height), as PIL's img.size."""
    F._check_image("transforms", img)
    return F._image_size(img)


def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
    """A jitter amount v becomes the range [center - v, center + v]; None where it changes nothing."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"{name}: if {name} is a single number, it must be non negative, got {value}")
        value = [center - value, center + value]
        if clip_first_on_zero:
            value[0] = max(value[0], 0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name}: values should be between {bound}, got {value}")
    else:
        raise TypeError(f"{name}: should be a single number or a list/tuple with length 2, got {value!r}")
    return None if value[0] == value[1] == center else value


class Compose:
    """Apply transforms in order; a failing one is printed with its traceback before the error propagates."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, data):
        for f in self.transforms:
            try:
                data = f(data)
            except Exception as e:
                print(f"fail to perform transform [{f}] with error: {e} and stack:\n{traceback.format_exc()}")
                raise
        return data

    def __repr__(self):
        return self.__class__.__name__ + "(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class BaseTransform:
    """keys name what each element of a tuple input is ('image', ...); `_apply_<key>` transforms it."""

    def __init__(self, keys=None):
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, Sequence):
            raise ValueError(f"keys should be a sequence, but got keys={keys}")
        for k in keys:
            if self._get_apply(k) is None:
                raise NotImplementedError(f"{k} is unsupported data structure")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = [self._get_apply(key)(item) for key, item in zip(self.keys, inputs)]
        outputs += inputs[len(self.keys) :]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key):
        return getattr(self, f"_apply_{key}", None)

    def _apply_image(self, image):
        raise NotImplementedError(f"{type(self).__name__}._apply_image")


class ToTensor(BaseTransform):
    """HWC array or PIL image to a CHW (or HWC) Tensor, uint8 scaled to [0, 1]."""

    def __init__(self, data_format="CHW", keys=None):
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img):
        return F.to_tensor(img, self.data_format)


class Resize(BaseTransform):
    """F.resize to size (an int matches the shorter side)."""

    def __init__(self, size, interpolation="bilinear", keys=None):
        super().__init__(keys)
        if not (isinstance(size, int) or (isinstance(size, Iterable) and len(size) == 2)):
            raise TypeError(f"Resize: expected size an int or a (h, w) pair, got {size!r}")
        self.size = size
        self.interpolation = interpolation

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)


class RandomResizedCrop(BaseTransform):
    """A crop of random area (scale of the image) and aspect ratio (log-uniform in ratio), resized to size."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3), interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = (size, size) if isinstance(size, int) else size
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError(f"RandomResizedCrop: scale and ratio should be (min, max), got {scale} and {ratio}")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation

    def _get_param(self, image, attempts=10):
        width, height = _get_image_size(image)
        area = height * width
        for _ in range(attempts):
            target_area = np.random.uniform(*self.scale) * area
            aspect_ratio = math.exp(np.random.uniform(*(math.log(x) for x in self.ratio)))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return random.randint(0, height - h), random.randint(0, width - w), h, w
        in_ratio = float(width) / float(height)  # fall back to a central crop
        w, h = width, height
        if in_ratio < min(self.ratio):
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            w = int(round(h * max(self.ratio)))
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img):
        i, j, h, w = self._get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """F.center_crop to size."""

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


class RandomHorizontalFlip(BaseTransform):
    """hflip with probability prob (random.random() < prob)."""

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        self.prob = prob

    def _apply_image(self, img):
        return F.hflip(img) if random.random() < self.prob else img


class RandomVerticalFlip(BaseTransform):
    """vflip with probability prob (random.random() < prob)."""

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        self.prob = prob

    def _apply_image(self, img):
        return F.vflip(img) if random.random() < self.prob else img


class Normalize(BaseTransform):
    """F.normalize; a number for mean or std stands for three equal channels."""

    def __init__(self, mean=0.0, std=1.0, data_format="CHW", to_rgb=False, keys=None):
        super().__init__(keys)
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        self.data_format = data_format
        self.to_rgb = to_rgb

    def _apply_image(self, img):
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Permute axes (default HWC to CHW) of an array (a PIL image's pixels); a 2-D image gains a channel axis first."""

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img):
        F._check_image("Transpose", img)
        img = np.asarray(img) if F._is_pil_image(img) else img
        return F._hwc(img).transpose(self.order)


class _ColorTransform(BaseTransform):
    """Draw a factor uniformly from the range _check_input makes of value and apply `_adjust` with it;
    no range (value 0), no change."""

    _name = ""
    _range: dict = {}

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _check_input(value, self._name, **self._range)

    def _apply_image(self, img):
        if self.value is None:
            return img
        return self._adjust(img, random.uniform(self.value[0], self.value[1]))


class BrightnessTransform(_ColorTransform):
    """adjust_brightness by a factor in [max(0, 1 - value), 1 + value]."""

    _name = "brightness"
    _adjust = staticmethod(F.adjust_brightness)


class ContrastTransform(_ColorTransform):
    """adjust_contrast by a factor in [max(0, 1 - value), 1 + value]."""

    _name = "contrast"
    _adjust = staticmethod(F.adjust_contrast)


class SaturationTransform(_ColorTransform):
    """adjust_saturation by a factor in [max(0, 1 - value), 1 + value]."""

    _name = "saturation"
    _adjust = staticmethod(F.adjust_saturation)


class HueTransform(_ColorTransform):
    """adjust_hue by a factor in [-value, value], value at most 0.5."""

    _name = "hue"
    _range = {"center": 0, "bound": (-0.5, 0.5), "clip_first_on_zero": False}
    _adjust = staticmethod(F.adjust_hue)


class ColorJitter(BaseTransform):
    """Brightness, contrast, saturation and hue jitter, in a random order each call."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.hue = hue

    def _get_param(self, brightness, contrast, saturation, hue):
        kinds = ((BrightnessTransform, brightness), (ContrastTransform, contrast))
        kinds += ((SaturationTransform, saturation), (HueTransform, hue))
        transforms = [kind(value, self.keys) for kind, value in kinds if value is not None]
        random.shuffle(transforms)
        return Compose(transforms)

    def _apply_image(self, img):
        return self._get_param(self.brightness, self.contrast, self.saturation, self.hue)(img)


class RandomCrop(BaseTransform):
    """A random (h, w) box, after optional padding (and padding up to size with pad_if_needed)."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant", keys=None):
        super().__init__(keys)
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _get_param(self, img, output_size):
        w, h = _get_image_size(img)
        th, tw = output_size
        if w == tw and h == th:
            return 0, 0, h, w
        return random.randint(0, h - th), random.randint(0, w - tw), th, tw

    def _apply_image(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = _get_image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, (self.size[1] - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, (0, self.size[0] - h), self.fill, self.padding_mode)
        return F.crop(img, *self._get_param(img, self.size))


class Pad(BaseTransform):
    """F.pad with fixed padding, fill and mode."""

    def __init__(self, padding, fill=0, padding_mode="constant", keys=None):
        if not isinstance(padding, (numbers.Number, list, tuple)):
            raise TypeError(f"Pad: expected padding an int, list or tuple, got {type(padding).__name__}")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"Pad: padding_mode should be constant, edge, reflect or symmetric, got {padding_mode!r}")
        padding = tuple(padding) if isinstance(padding, list) else padding
        if isinstance(padding, Sequence) and len(padding) not in (2, 4):
            raise ValueError(
                f"Pad: padding must be an int or a 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        super().__init__(keys)
        self.padding = padding
        self.fill = tuple(fill) if isinstance(fill, list) else fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class RandomRotation(BaseTransform):
    """F.rotate by an angle drawn uniformly from degrees ((-d, d) for a number d)."""

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0, keys=None):
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"RandomRotation: if degrees is a single number, it must be positive, got {degrees}")
            degrees = (-degrees, degrees)
        elif len(degrees) != 2:
            raise ValueError(f"RandomRotation: if degrees is a sequence, it must be of len 2, got {degrees}")
        super().__init__(keys)
        self.degrees = degrees
        self.interpolation = interpolation
        self.expand = expand
        self.center = center
        self.fill = fill

    def _get_param(self, degrees):
        return random.uniform(degrees[0], degrees[1])

    def _apply_image(self, img):
        angle = self._get_param(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class Grayscale(BaseTransform):
    """F.to_grayscale to 1 or 3 channels."""

    def __init__(self, num_output_channels=1, keys=None):
        super().__init__(keys)
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)
