/* JPEG through libjpeg-turbo. libjpeg reports errors by calling error_exit, which must not
 * return: it longjmps back here, and the jmp_buf never outlives the function that set it. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "codec.h"

/* A progressive JPEG can hold thousands of tiny scans, each a pass over the whole image. */
#define MAX_SCANS 500

struct trap {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
};

static void trap_error_exit(j_common_ptr info) {
    longjmp(((struct trap *)info->err)->jump, 1);
}

static void trap_output_message(j_common_ptr info) {
    (void)info; /* warnings are not printed: the library's caller decides what to say */
}

static void limit_scans(j_common_ptr info) {
    if (info->is_decompressor && ((j_decompress_ptr)info)->input_scan_number > MAX_SCANS) {
        info->err->msg_code = JERR_UNKNOWN_MARKER;
        trap_error_exit(info);
    }
}

static void trap_init(struct jpeg_error_mgr **err, struct trap *trap) {
    *err = jpeg_std_error(&trap->mgr);
    trap->mgr.error_exit = trap_error_exit;
    trap->mgr.output_message = trap_output_message;
}

int panto_jpeg_decode(const uint8_t *data, size_t len, uint64_t max_pixels, uint32_t want_w, uint32_t want_h, panto_media_alloc alloc, void *ctx, panto_media_shape *out) {
    struct jpeg_decompress_struct info;
    struct trap trap;
    struct jpeg_progress_mgr progress;
    memset(&info, 0, sizeof info);
    trap_init(&info.err, &trap);
    volatile int status = PANTO_MEDIA_CORRUPT;
    if (setjmp(trap.jump)) {
        jpeg_destroy_decompress(&info);
        return status;
    }
    jpeg_create_decompress(&info);
    progress.progress_monitor = limit_scans;
    info.progress = &progress;
    jpeg_mem_src(&info, data, (unsigned long)len);
    if (jpeg_read_header(&info, TRUE) != JPEG_HEADER_OK) longjmp(trap.jump, 1);
    if (info.image_width == 0 || info.image_height == 0) longjmp(trap.jump, 1);
    if ((uint64_t)info.image_width * info.image_height > max_pixels) {
        status = PANTO_MEDIA_TOO_LARGE;
        longjmp(trap.jump, 1);
    }
    info.out_color_space = info.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    if (want_w > 0 && want_h > 0) {
        /* The smallest M/8 whose output still covers the wanted size: the rest is filtered. */
        unsigned int num = 8;
        for (unsigned int m = 1; m < 8; m++) {
            if ((uint64_t)info.image_width * m >= (uint64_t)want_w * 8 && (uint64_t)info.image_height * m >= (uint64_t)want_h * 8) {
                num = m;
                break;
            }
        }
        info.scale_num = num;
        info.scale_denom = 8;
    }
    jpeg_start_decompress(&info);
    size_t row = (size_t)info.output_width * info.output_components;
    uint8_t *pixels = alloc(ctx, row * info.output_height);
    if (pixels == NULL) {
        status = PANTO_MEDIA_NO_MEMORY;
        longjmp(trap.jump, 1);
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW rows[1] = {pixels + row * info.output_scanline};
        jpeg_read_scanlines(&info, rows, 1);
    }
    out->width = info.output_width;
    out->height = info.output_height;
    out->channels = (uint32_t)info.output_components;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return PANTO_MEDIA_OK;
}

int panto_jpeg_encode(const uint8_t *pixels, panto_media_shape shape, int quality, panto_media_alloc alloc, void *ctx, size_t *out_len) {
    struct jpeg_compress_struct info;
    struct trap trap;
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    memset(&info, 0, sizeof info);
    trap_init(&info.err, &trap);
    if (setjmp(trap.jump)) {
        jpeg_destroy_compress(&info);
        free(buffer);
        return PANTO_MEDIA_CORRUPT;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&buffer, &size);
    info.image_width = shape.width;
    info.image_height = shape.height;
    info.input_components = (int)shape.channels;
    info.in_color_space = shape.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    size_t row = (size_t)shape.width * shape.channels;
    while (info.next_scanline < info.image_height) {
        JSAMPROW rows[1] = {(JSAMPROW)(pixels + row * info.next_scanline)};
        jpeg_write_scanlines(&info, rows, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    uint8_t *copy = alloc(ctx, size);
    if (copy == NULL) {
        free(buffer);
        return PANTO_MEDIA_NO_MEMORY;
    }
    memcpy(copy, buffer, size);
    free(buffer);
    *out_len = size;
    return PANTO_MEDIA_OK;
}
