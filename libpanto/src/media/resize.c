/* Downscaling with stb_image_resize (Debian's libstb.a holds its implementation). */
#include <stb/stb_image_resize.h>
#include "codec.h"

int panto_resize(const uint8_t *in, panto_media_shape in_shape, uint8_t *out, panto_media_shape out_shape) {
    int alpha = in_shape.channels == 2 || in_shape.channels == 4 ? (int)in_shape.channels - 1 : STBIR_ALPHA_CHANNEL_NONE;
    /* Mitchell: a cubic that neither rings much nor blurs much, on the values as they are
     * (as Pillow resamples); stb weights the colors by alpha. */
    int ok = stbir_resize_uint8_generic(in, (int)in_shape.width, (int)in_shape.height, 0, out, (int)out_shape.width, (int)out_shape.height, 0,
                                        (int)in_shape.channels, alpha, 0, STBIR_EDGE_CLAMP, STBIR_FILTER_MITCHELL, STBIR_COLORSPACE_LINEAR, NULL);
    return ok ? PANTO_MEDIA_OK : PANTO_MEDIA_NO_MEMORY;
}
