"""`pillow_fit.py IN OUT FORMAT`: Pillow's way to fit an image into 2000x2000 (bench/images.py):
Image.thumbnail (bicubic, with its JPEG draft mode and reducing gap), then save in the same
format at the quality panto writes (85). Prints the line media_fit prints:
`RESULT <seconds> <width> <height> <bytes> <media_type>`, seconds from opening IN to OUT written."""

import os
import sys
import time

from PIL import Image

QUALITY = 85  # libpanto/src/media/fit.zig: `quality`


def main() -> None:
    src, dst, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
    start = time.perf_counter()
    with Image.open(src) as im:
        im.thumbnail((2000, 2000), Image.Resampling.BICUBIC)
        options = {"quality": QUALITY} if fmt in ("JPEG", "WEBP") else {}
        im.save(dst, fmt, **options)
        width, height = im.size
    seconds = time.perf_counter() - start
    print(f"RESULT {seconds:.4f} {width} {height} {os.path.getsize(dst)} image/{fmt.lower()}", flush=True)


if __name__ == "__main__":
    main()
