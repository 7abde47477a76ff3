/* PNG through libpng's simplified API, which catches libpng's own longjmp errors inside
 * (png_safe_execute) and reports them as a 0 return. */
#include <png.h>
#include <string.h>
#include "codec.h"

int panto_png_decode(const uint8_t *data, size_t len, uint64_t max_pixels, panto_media_alloc alloc, void *ctx, panto_media_shape *out) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, len)) return PANTO_MEDIA_CORRUPT;
    if (image.width == 0 || image.height == 0) {
        png_image_free(&image);
        return PANTO_MEDIA_CORRUPT;
    }
    if ((uint64_t)image.width * image.height > max_pixels) {
        png_image_free(&image);
        return PANTO_MEDIA_TOO_LARGE;
    }
    /* Keep what the image has: gray stays gray, alpha stays; palettes and 16 bits become 8-bit. */
    uint32_t channels = (image.format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
    if (image.format & PNG_FORMAT_FLAG_ALPHA) channels += 1;
    image.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 2 ? PNG_FORMAT_GA : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    uint8_t *pixels = alloc(ctx, (size_t)image.width * image.height * channels);
    if (pixels == NULL) {
        png_image_free(&image);
        return PANTO_MEDIA_NO_MEMORY;
    }
    if (!png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
        png_image_free(&image);
        return PANTO_MEDIA_CORRUPT;
    }
    out->width = image.width;
    out->height = image.height;
    out->channels = channels;
    png_image_free(&image);
    return PANTO_MEDIA_OK;
}

int panto_png_encode(const uint8_t *pixels, panto_media_shape shape, panto_media_alloc alloc, void *ctx, size_t *out_len) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = shape.width;
    image.height = shape.height;
    image.format = shape.channels == 1 ? PNG_FORMAT_GRAY : shape.channels == 2 ? PNG_FORMAT_GA : shape.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    /* Speed over size: a fitted image is sent once, and at 2000x1500 a photo compressed hard
     * costs seconds (and is sent as JPEG anyway when over the limit); flat images, screenshots,
     * stay small either way. */
    image.flags = PNG_IMAGE_FLAG_FAST;
    /* Written once into a buffer of the worst-case size (the caller trims it): asking libpng
     * for the size first would compress twice. */
    png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(image);
    uint8_t *memory = alloc(ctx, size);
    if (memory == NULL) return PANTO_MEDIA_NO_MEMORY;
    if (!png_image_write_to_memory(&image, memory, &size, 0, pixels, 0, NULL)) {
        png_image_free(&image);
        return PANTO_MEDIA_CORRUPT;
    }
    *out_len = size;
    return PANTO_MEDIA_OK;
}
