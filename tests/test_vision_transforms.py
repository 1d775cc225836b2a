"""paddle.vision.transforms on NumPy HWC arrays (Paddle 2.0's 'cv2' backend): values from OpenCV 4
(printed by cv2 for the arrays below) and from Paddle 2.0's test_transforms.py / functional docstrings.

Tolerance: rotate, grey, HSV, pad and the lookup tables equal OpenCV's exactly; 8-bit bilinear resize is
within one grey level of OpenCV's (its vector and scalar loops round differently; under 1% of values)."""

import random

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.vision import transforms as T
from fleetgraph.vision.transforms import functional as F


def _image(h=20, w=30, c=3, seed=0):
    return np.random.RandomState(seed).randint(0, 256, (h, w, c)).astype("uint8")


def test_resize_bilinear_samples_at_half_pixel_centres():
    row = np.array([[[0], [255]]], dtype="uint8")  # 1 x 2 x 1
    out = F.resize(row, (1, 4))
    np.testing.assert_array_equal(out[0, :, 0], [0, 64, 191, 255])  # -0.25 clamped, 0.25, 0.75, 1.25 clamped
    img = _image(8, 8)
    halved = F.resize(img, (4, 4)).astype(int)
    means = img.reshape(4, 2, 4, 2, 3).astype(float).mean(axis=(1, 3))
    assert np.abs(halved - means).max() <= 0.5  # a 2x reduction averages 2x2 blocks, as cv2's INTER_AREA path


def test_resize_and_rotate_give_opencvs_values():
    small = np.arange(12, dtype="uint8").reshape(3, 4, 1) * 20
    cv2_resized = [
        [0, 7, 18, 30, 41, 53, 60],
        [32, 39, 50, 62, 73, 85, 92],
        [80, 87, 99, 110, 121, 133, 140],
        [128, 135, 146, 158, 169, 181, 188],
        [160, 167, 178, 190, 201, 213, 220],
    ]
    assert np.abs(F.resize(small, (5, 7))[..., 0].astype(int) - cv2_resized).max() <= 1
    square = np.arange(25, dtype="uint8").reshape(5, 5) * 10
    cv2_bilinear = [
        [1, 14, 38, 57, 0],
        [10, 41, 75, 109, 60],
        [47, 80, 114, 148, 169],
        [85, 119, 153, 186, 220],
        [76, 158, 191, 208, 101],
    ]
    cv2_nearest = [
        [0, 20, 30, 90, 0],
        [10, 20, 80, 90, 0],
        [60, 60, 120, 130, 190],
        [100, 110, 170, 180, 240],
        [150, 150, 210, 220, 0],
    ]
    np.testing.assert_array_equal(F.rotate(square, 30, "bilinear"), cv2_bilinear)
    np.testing.assert_array_equal(F.rotate(square, 30), cv2_nearest)


def test_resize_nearest_takes_the_floor_of_the_scaled_index():
    img = np.arange(5, dtype="uint8").reshape(1, 5, 1)
    np.testing.assert_array_equal(F.resize(img, (1, 3), "nearest")[0, :, 0], [0, 1, 3])
    np.testing.assert_array_equal(F.resize(img, (1, 10), "nearest")[0, :, 0], np.repeat(np.arange(5), 2))


def test_resize_int_matches_the_shorter_side():
    assert F.resize(_image(20, 30), 10).shape == (10, 15, 3)
    assert F.resize(_image(30, 20), 10).shape == (15, 10, 3)
    assert F.resize(np.zeros((28, 32), "uint8"), 40).shape == (40, 45)  # int(40 * 32 / 28)
    img = _image(10, 30)
    assert F.resize(img, 10) is img  # already the size asked
    assert T.Resize((7, 9))(img).shape == (7, 9, 3)
    with pytest.raises(NotImplementedError, match="resize: interpolation 'bicubic'"):
        F.resize(img, 5, "bicubic")
    with pytest.raises(TypeError):
        F.resize(img, "1")


def test_pad_modes_as_the_docstring_shows():
    row = np.array([[1, 2, 3, 4]], dtype="uint8")
    np.testing.assert_array_equal(F.pad(row, [2, 0], padding_mode="reflect")[0], [3, 2, 1, 2, 3, 4, 3, 2])
    np.testing.assert_array_equal(F.pad(row, [2, 0], padding_mode="symmetric")[0], [2, 1, 1, 2, 3, 4, 4, 3])
    np.testing.assert_array_equal(F.pad(row, [1, 0], padding_mode="edge")[0], [1, 1, 2, 3, 4, 4])
    img = _image(200, 150)
    assert T.Pad(10)(img).shape == (220, 170, 3)
    out = F.pad(img, [1, 2, 3, 4], fill=(9, 8, 7))
    assert out.shape == (206, 154, 3)
    np.testing.assert_array_equal(out[0, 0], [9, 8, 7])
    np.testing.assert_array_equal(out[2:-4, 1:-3], img)


def test_crop_center_crop_and_flips():
    img = _image(28, 24)
    np.testing.assert_array_equal(F.crop(img, 2, 3, 4, 5), img[2:6, 3:8])
    np.testing.assert_array_equal(F.center_crop(img, 4), img[12:16, 10:14])
    np.testing.assert_array_equal(T.CenterCrop((4, 6))(img), img[12:16, 9:15])
    np.testing.assert_array_equal(F.hflip(img), img[:, ::-1])
    np.testing.assert_array_equal(F.vflip(img), img[::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(img), img[:, ::-1])
    np.testing.assert_array_equal(T.RandomVerticalFlip(0.0)(img), img)


def test_rotate_quarter_turn_about_the_middle_is_rot90_counter_clockwise():
    img = _image(6, 6)
    for interpolation in ("nearest", "bilinear"):
        np.testing.assert_array_equal(F.rotate(img, 90, interpolation, center=(2.5, 2.5)), np.rot90(img))
    np.testing.assert_array_equal(F.rotate(img, 0), img)
    shifted = F.rotate(img, 90)  # about (w / 2, h / 2): the top row comes from outside and reads fill
    np.testing.assert_array_equal(shifted[1:], np.rot90(img)[:5])
    assert (F.rotate(img, 90, fill=7)[0] == 7).all()


def test_rotate_expand_grows_to_pils_expanded_size():
    # the shapes Pillow's Image.rotate(angle, expand=True) gives, as Paddle 2.0's test compares
    for (h, w), angle, shape in [
        ((28, 28), 80, (34, 34, 3)),
        ((20, 30), 45, (36, 36, 3)),
        ((200, 150), 10, (224, 184, 3)),
    ]:
        assert F.rotate(_image(h, w), angle, expand=True).shape == shape
    random.seed(0)
    out = T.RandomRotation(10, expand=True, center=(60, 80))(_image(200, 150))
    assert out.ndim == 3 and out.shape[0] >= 200


def test_grayscale_uses_opencvs_fixed_point_weights():
    img = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [10, 20, 30]]], dtype="uint8")
    np.testing.assert_array_equal(F.to_grayscale(img)[0, :, 0], [76, 150, 29, 18])
    three = T.Grayscale(3)(_image(50, 40))
    assert three.shape == (50, 40, 3) and (three[..., 0] == three[..., 2]).all()
    with pytest.raises(ValueError):
        T.Grayscale(5)(_image())


def test_brightness_and_contrast_are_paddles_lookup_tables():
    img = np.array([[[0, 74, 100], [128, 200, 255]]], dtype="uint8")
    np.testing.assert_array_equal(F.adjust_brightness(img, 1.5), [[[0, 111, 150], [192, 255, 255]]])
    np.testing.assert_array_equal(F.adjust_brightness(img, 0.0), np.zeros_like(img))
    np.testing.assert_array_equal(F.adjust_contrast(img, 2.0), [[[0, 74, 126], [182, 255, 255]]])
    np.testing.assert_array_equal(F.adjust_contrast(img, 1.0), img)


def test_hue_keeps_greys_and_shifts_the_eight_bit_hue():
    from fleetgraph.vision.transforms import _kernels

    primaries = np.array([[[0, 0, 255], [0, 255, 0], [255, 0, 0]]], dtype="uint8")  # read as B, G, R
    np.testing.assert_array_equal(_kernels.bgr_to_hsv_full(primaries)[0, :, 0], [0, 85, 171])  # cv2's FULL hues
    img = np.array([[[0, 0, 255], [10, 200, 30], [250, 120, 5], [90, 90, 90]]], dtype="uint8")
    cv2_values = {  # OpenCV's BGR2HSV_FULL, hue + uint8(factor * 255), HSV2BGR_FULL
        0.0: [[[0, 0, 255], [10, 200, 28], [250, 114, 5], [90, 90, 90]]],
        0.2: [[[0, 255, 204], [200, 180, 10], [250, 5, 189], [90, 90, 90]]],
        -0.4: [[[255, 96, 0], [100, 10, 200], [5, 250, 213], [90, 90, 90]]],
        1 / 3: [[[0, 255, 0], [200, 28, 10], [114, 5, 250], [90, 90, 90]]],
    }
    for factor, expected in cv2_values.items():
        np.testing.assert_array_equal(F.adjust_hue(img, factor), expected)
    with pytest.raises(ValueError, match=r"\[-0.5, 0.5\]"):
        F.adjust_hue(img, 0.6)


def test_saturation_blends_with_grey_by_paddles_random_alpha():
    img = _image(4, 5)
    np.random.seed(3)
    out = F.adjust_saturation(img, 0.5)
    np.random.seed(3)
    alpha = np.random.uniform(0.5, 1.5)  # Paddle 2.0's cv2 backend draws the blend, grey read as BGR
    data = img.astype("float32")
    gray = (data[..., 2] * 0.299 + data[..., 1] * 0.587 + data[..., 0] * 0.114)[..., None]
    np.testing.assert_array_equal(out, (data * alpha + gray * (1 - alpha)).clip(0, 255).astype("uint8"))


def test_color_transforms_draw_factors_in_their_ranges():
    img = _image()
    assert T.BrightnessTransform(0.0)(img) is img
    random.seed(1)
    out = T.ColorJitter(0.4, 0.4, 0.4, 0.4)(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    assert T.SaturationTransform(0.4)(img).shape == img.shape
    assert T.HueTransform(0.4)(img).shape == img.shape
    assert T.ContrastTransform(0.4)(img).dtype == np.uint8
    for kind in (T.ContrastTransform, T.SaturationTransform, T.HueTransform, T.BrightnessTransform):
        with pytest.raises(ValueError):
            kind(-1.0)
    with pytest.raises(ValueError):
        T.BrightnessTransform([-0.1, -0.2])
    with pytest.raises(TypeError):
        T.BrightnessTransform("0.1")
    with pytest.raises(ValueError):
        T.BrightnessTransform("0.1", keys=1)
    with pytest.raises(NotImplementedError):
        T.BrightnessTransform("0.1", keys="a")


def test_random_crops_and_resized_crops_keep_the_asked_size():
    random.seed(0)
    np.random.seed(0)
    img = _image(500, 400)
    crop1 = T.RandomCrop(224)(img)
    assert crop1.shape == (224, 224, 3)
    crop2 = T.RandomCrop((140, 160))(crop1)
    assert crop2.shape == (140, 160, 3)
    assert T.RandomCrop((180, 200), pad_if_needed=True)(crop2).shape == (180, 200, 3)
    assert T.RandomCrop((224, 256), 2, True)(crop2).shape == (224, 256, 3)
    assert T.RandomResizedCrop(64)(img).shape == (64, 64, 3)
    assert T.RandomResizedCrop((30, 40), interpolation="nearest")(img).shape == (30, 40, 3)
    with pytest.raises(TypeError):
        T.RandomResizedCrop(64)(1)


def test_to_tensor_scales_uint8_and_lays_out_chw():
    img = _image(50, 100)
    tensor = T.ToTensor()(img)
    assert isinstance(tensor, paddle.Tensor) and tensor.shape == [3, 50, 100]
    np.testing.assert_allclose(tensor.numpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    hwc = F.to_tensor(img[..., 0], data_format="HWC")
    assert hwc.shape == [50, 100, 1] and str(hwc.dtype).endswith("float32")
    floats = np.random.rand(28, 28)
    np.testing.assert_array_equal(F.to_tensor(floats).numpy()[0], floats)  # other dtypes unscaled
    with pytest.raises(ValueError):
        F.to_tensor(img, data_format=1)


def test_normalize_arrays_and_tensors():
    img = _image(4, 5)
    out = F.normalize(img, [127.5] * 3, [127.5] * 3, data_format="HWC")
    np.testing.assert_allclose(out, (img.astype("float32") - 127.5) / 127.5, rtol=1e-6)
    assert out.dtype == np.float32
    rgb = F.normalize(img, [1, 2, 3], [1, 1, 1], data_format="HWC", to_rgb=True)
    np.testing.assert_allclose(rgb, img[..., ::-1] - np.float32([1, 2, 3]))
    tensor = F.to_tensor(img)
    np.testing.assert_allclose(
        F.normalize(tensor, [0.5] * 3, [0.5] * 3).numpy(), (tensor.numpy() - 0.5) / 0.5, rtol=1e-6
    )
    chw = T.Normalize(mean=[1.0, 2.0, 3.0], std=2.0)(img.transpose(2, 0, 1).astype("float32"))
    np.testing.assert_allclose(chw[1], (img[..., 1] - 2.0) / 2.0)


def test_transpose_compose_and_keys():
    img = _image(50, 100)
    assert T.Transpose()(img).shape == (3, 50, 100)
    assert T.Transpose()(img[..., 0]).shape == (1, 50, 100)
    pipeline = T.Compose([T.Resize((10, 20)), T.Normalize(127.5, 127.5, "HWC"), T.Transpose()])
    assert pipeline(img).shape == (3, 10, 20)
    assert "Compose(" in str(pipeline)
    padded, label = T.Pad(10, keys=("image",))((img, 3))
    assert padded.shape == (70, 120, 3) and label == 3


def test_non_images_are_refused_naming_what_is_accepted():
    for call in (
        lambda: F.to_tensor(1), lambda: F.resize(1, 1), lambda: F.pad(1, 1), lambda: F.crop(1, 1, 1, 1, 1),
        lambda: F.hflip(1), lambda: F.vflip(1), lambda: F.adjust_brightness(1, 0.1),
        lambda: F.adjust_contrast(1, 0.1), lambda: F.adjust_hue(1, 0.1), lambda: F.adjust_saturation(1, 0.1),
        lambda: F.rotate(1, 0.1), lambda: F.to_grayscale(1), lambda: F.center_crop(1, 2), lambda: F.normalize(1, 0, 1),
    ):  # fmt: skip
        with pytest.raises(TypeError, match="expected a PIL image or a numpy image"):
            call()
    img = _image()
    with pytest.raises(TypeError):
        F.pad(img, "1")
    with pytest.raises(TypeError):
        F.pad(img, 1, {})
    with pytest.raises(TypeError):
        F.pad(img, 1, padding_mode=-1)
    with pytest.raises(ValueError):
        F.pad(img, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        T.Pad([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        T.RandomRotation(-2)
    with pytest.raises(ValueError):
        T.RandomRotation([1, 2, 3])
