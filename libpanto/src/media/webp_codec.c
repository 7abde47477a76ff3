/* WEBP through libwebp (still images) and libwebpdemux (the first frame of an animation). */
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include "codec.h"

static int first_frame(const uint8_t *data, size_t len, uint32_t width, uint32_t height, panto_media_alloc alloc, void *ctx, panto_media_shape *out) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) return PANTO_MEDIA_CORRUPT;
    options.color_mode = MODE_RGBA;
    WebPData whole = {data, len};
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&whole, &options);
    if (decoder == NULL) return PANTO_MEDIA_CORRUPT;
    WebPAnimInfo info;
    uint8_t *canvas = NULL;
    int timestamp = 0;
    if (!WebPAnimDecoderGetInfo(decoder, &info) || info.canvas_width != width || info.canvas_height != height || !WebPAnimDecoderGetNext(decoder, &canvas, &timestamp)) {
        WebPAnimDecoderDelete(decoder);
        return PANTO_MEDIA_CORRUPT;
    }
    size_t size = (size_t)width * height * 4;
    uint8_t *pixels = alloc(ctx, size);
    if (pixels == NULL) {
        WebPAnimDecoderDelete(decoder);
        return PANTO_MEDIA_NO_MEMORY;
    }
    memcpy(pixels, canvas, size);
    WebPAnimDecoderDelete(decoder);
    out->width = width;
    out->height = height;
    out->channels = 4;
    return PANTO_MEDIA_OK;
}

int panto_webp_decode(const uint8_t *data, size_t len, uint64_t max_pixels, uint32_t want_w, uint32_t want_h, panto_media_alloc alloc, void *ctx, panto_media_shape *out, int *lossless) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return PANTO_MEDIA_CORRUPT;
    if (WebPGetFeatures(data, len, &config.input) != VP8_STATUS_OK) return PANTO_MEDIA_CORRUPT;
    uint32_t width = (uint32_t)config.input.width, height = (uint32_t)config.input.height;
    if (width == 0 || height == 0) return PANTO_MEDIA_CORRUPT;
    if ((uint64_t)width * height > max_pixels) return PANTO_MEDIA_TOO_LARGE;
    *lossless = config.input.format == 2;
    if (config.input.has_animation) return first_frame(data, len, width, height, alloc, ctx, out);
    uint32_t channels = config.input.has_alpha ? 4 : 3;
    if (want_w > 0 && want_h > 0 && (want_w < width || want_h < height)) {
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)want_w;
        config.options.scaled_height = (int)want_h;
        width = want_w;
        height = want_h;
    }
    size_t stride = (size_t)width * channels;
    uint8_t *pixels = alloc(ctx, stride * height);
    if (pixels == NULL) return PANTO_MEDIA_NO_MEMORY;
    config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = stride * height;
    int status = WebPDecode(data, len, &config) == VP8_STATUS_OK ? PANTO_MEDIA_OK : PANTO_MEDIA_CORRUPT;
    WebPFreeDecBuffer(&config.output);
    if (status != PANTO_MEDIA_OK) return status;
    out->width = width;
    out->height = height;
    out->channels = channels;
    return PANTO_MEDIA_OK;
}

int panto_webp_encode(const uint8_t *pixels, panto_media_shape shape, int quality, panto_media_alloc alloc, void *ctx, size_t *out_len) {
    uint8_t *encoded = NULL;
    int w = (int)shape.width, h = (int)shape.height, stride = (int)(shape.width * shape.channels);
    size_t size;
    if (quality < 0)
        size = shape.channels == 4 ? WebPEncodeLosslessRGBA(pixels, w, h, stride, &encoded) : WebPEncodeLosslessRGB(pixels, w, h, stride, &encoded);
    else
        size = shape.channels == 4 ? WebPEncodeRGBA(pixels, w, h, stride, (float)quality, &encoded) : WebPEncodeRGB(pixels, w, h, stride, (float)quality, &encoded);
    if (size == 0) {
        WebPFree(encoded);
        return PANTO_MEDIA_CORRUPT;
    }
    uint8_t *copy = alloc(ctx, size);
    if (copy == NULL) {
        WebPFree(encoded);
        return PANTO_MEDIA_NO_MEMORY;
    }
    memcpy(copy, encoded, size);
    WebPFree(encoded);
    *out_len = size;
    return PANTO_MEDIA_OK;
}
