package computeruse

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math/bits"
)

// XWD (X Window Dump, file version 7) as xwd writes it: a header of 25
// 32-bit fields, the window's name up to the header's size, the colormap
// (ncolors entries of 12 bytes), then the image, height rows of
// bytes_per_line bytes. xwd writes the header and colormap most
// significant byte first; the pixels are in the image's own byte order.

const (
	xwdVersion    = 7
	xwdHeaderLen  = 25 * 4
	xwdColorLen   = 12
	xwdZPixmap    = 2
	xwdLSBFirst   = 0
	xwdMSBFirst   = 1
	maxXWDSide    = 1 << 15
	maxXWDColours = 1 << 16
)

// The header fields DecodeXWD uses, by index.
const (
	xwdHeaderSize = iota
	xwdFileVersion
	xwdPixmapFormat
	xwdPixmapDepth
	xwdPixmapWidth
	xwdPixmapHeight
	xwdXOffset
	xwdByteOrder
	xwdBitmapUnit
	xwdBitmapBitOrder
	xwdBitmapPad
	xwdBitsPerPixel
	xwdBytesPerLine
	xwdVisualClass
	xwdRedMask
	xwdGreenMask
	xwdBlueMask
	xwdBitsPerRGB
	xwdColormapEntries
	xwdNColors
)

// ErrXWD is wrapped by every error DecodeXWD returns.
var ErrXWD = errors.New("not a supported XWD image")

// DecodeXWD decodes an XWD dump of a ZPixmap image with 8 (through its
// colormap), 16, 24 or 32 bits per pixel and colour masks (TrueColor or
// DirectColor), as `xwd -root` writes for Xvfb's screens.
func DecodeXWD(b []byte) (*image.RGBA, error) {
	h, order, err := readXWDHeader(b)
	if err != nil {
		return nil, err
	}
	w, ht := h[xwdPixmapWidth], h[xwdPixmapHeight]
	bpp, bpl := h[xwdBitsPerPixel], h[xwdBytesPerLine]
	off := uint64(h[xwdHeaderSize])
	ncolors := uint64(h[xwdNColors])
	if off+ncolors*xwdColorLen > uint64(len(b)) {
		return nil, fmt.Errorf("%w: the colormap is cut short", ErrXWD)
	}
	cmap := b[off : off+ncolors*xwdColorLen]
	data := b[off+ncolors*xwdColorLen:]
	if need := uint64(bpl) * uint64(ht); uint64(len(data)) < need {
		return nil, fmt.Errorf("%w: %d bytes of pixels, want %d", ErrXWD, len(data), need)
	}

	read := xwdPixelReader(bpp, h[xwdByteOrder] == xwdMSBFirst)
	toRGB, err := xwdColours(h, order, cmap)
	if err != nil {
		return nil, err
	}

	img := image.NewRGBA(image.Rect(0, 0, int(w), int(ht)))
	step := int(bpp / 8)
	for y := 0; y < int(ht); y++ {
		row := data[y*int(bpl):]
		out := img.Pix[y*img.Stride:]
		for x := 0; x < int(w); x++ {
			c := toRGB(read(row[x*step:]))
			o := out[x*4 : x*4+4 : x*4+4]
			o[0], o[1], o[2], o[3] = c.R, c.G, c.B, c.A
		}
	}
	return img, nil
}

// readXWDHeader reads the header of the dump b in the byte order it was
// written in, which it returns, and refuses a header this decoder cannot
// follow or that does not fit b.
func readXWDHeader(b []byte) (h [25]uint32, order binary.ByteOrder, err error) {
	if len(b) < xwdHeaderLen {
		return h, nil, fmt.Errorf("%w: %d bytes is shorter than the header", ErrXWD, len(b))
	}
	// The header is big-endian as xwd writes it; a dump written without
	// the swap is read too.
	order = binary.BigEndian
	if binary.BigEndian.Uint32(b[4:]) != xwdVersion {
		if binary.LittleEndian.Uint32(b[4:]) != xwdVersion {
			return h, nil, fmt.Errorf("%w: file version %d, want %d", ErrXWD, binary.BigEndian.Uint32(b[4:]), xwdVersion)
		}
		order = binary.LittleEndian
	}
	for i := range h {
		h[i] = order.Uint32(b[4*i:])
	}
	w, ht := h[xwdPixmapWidth], h[xwdPixmapHeight]
	bpp, bpl := h[xwdBitsPerPixel], h[xwdBytesPerLine]
	switch {
	case h[xwdPixmapFormat] != xwdZPixmap:
		return h, nil, fmt.Errorf("%w: pixmap format %d, want ZPixmap", ErrXWD, h[xwdPixmapFormat])
	case w == 0 || ht == 0 || w > maxXWDSide || ht > maxXWDSide:
		return h, nil, fmt.Errorf("%w: size %dx%d", ErrXWD, w, ht)
	case bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32:
		return h, nil, fmt.Errorf("%w: %d bits per pixel", ErrXWD, bpp)
	case uint64(bpl) < (uint64(w)*uint64(bpp)+7)/8:
		return h, nil, fmt.Errorf("%w: %d bytes per line for %d pixels of %d bits", ErrXWD, bpl, w, bpp)
	case h[xwdByteOrder] != xwdLSBFirst && h[xwdByteOrder] != xwdMSBFirst:
		return h, nil, fmt.Errorf("%w: byte order %d", ErrXWD, h[xwdByteOrder])
	case h[xwdHeaderSize] < xwdHeaderLen || uint64(h[xwdHeaderSize]) > uint64(len(b)):
		return h, nil, fmt.Errorf("%w: header size %d", ErrXWD, h[xwdHeaderSize])
	case h[xwdNColors] > maxXWDColours:
		return h, nil, fmt.Errorf("%w: %d colours", ErrXWD, h[xwdNColors])
	}
	return h, order, nil
}

// xwdPixelReader reads one pixel value of bpp bits, most significant byte
// first or not.
func xwdPixelReader(bpp uint32, msbFirst bool) func(p []byte) uint32 {
	var pixelOrder binary.ByteOrder = binary.LittleEndian
	if msbFirst {
		pixelOrder = binary.BigEndian
	}
	return func(p []byte) uint32 {
		switch bpp {
		case 8:
			return uint32(p[0])
		case 16:
			return uint32(pixelOrder.Uint16(p))
		case 24:
			if pixelOrder == binary.BigEndian {
				return uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
			}
			return uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
		default:
			return pixelOrder.Uint32(p)
		}
	}
}

// xwdColours turns a pixel value of the dump with header h (in order) into
// its colour: through the colormap cmap for 8 bits a pixel, through the
// header's colour masks otherwise.
func xwdColours(h [25]uint32, order binary.ByteOrder, cmap []byte) (func(px uint32) color.RGBA, error) {
	if h[xwdBitsPerPixel] != 8 {
		r, g, bl := channel(h[xwdRedMask]), channel(h[xwdGreenMask]), channel(h[xwdBlueMask])
		if r.mask == 0 || g.mask == 0 || bl.mask == 0 {
			return nil, fmt.Errorf("%w: colour masks %#x %#x %#x", ErrXWD, h[xwdRedMask], h[xwdGreenMask], h[xwdBlueMask])
		}
		return func(px uint32) color.RGBA {
			return color.RGBA{R: r.value(px), G: g.value(px), B: bl.value(px), A: 0xff}
		}, nil
	}
	// Indexed: the colormap's entries, each a pixel value and 16-bit
	// red, green and blue (big-endian, as the header).
	ncolors := uint64(h[xwdNColors])
	palette := make(map[uint32]color.RGBA, ncolors)
	for i := uint64(0); i < ncolors; i++ {
		e := cmap[i*xwdColorLen:]
		palette[order.Uint32(e)] = color.RGBA{
			R: uint8(order.Uint16(e[4:]) >> 8),
			G: uint8(order.Uint16(e[6:]) >> 8),
			B: uint8(order.Uint16(e[8:]) >> 8),
			A: 0xff,
		}
	}
	return func(px uint32) color.RGBA {
		if c, ok := palette[px]; ok {
			return c
		}
		return color.RGBA{A: 0xff}
	}, nil
}

// channelMask is one colour's mask: where its bits are and their largest
// value.
type channelMask struct {
	mask  uint32
	shift int
	max   uint64
}

func channel(mask uint32) channelMask {
	if mask == 0 {
		return channelMask{}
	}
	return channelMask{mask: mask, shift: bits.TrailingZeros32(mask), max: 1<<bits.OnesCount32(mask) - 1}
}

// value scales the channel's bits of px to 0–255.
func (c channelMask) value(px uint32) uint8 {
	v := uint64((px & c.mask) >> c.shift)
	if c.max == 0xff {
		return uint8(v)
	}
	return uint8((v*255 + c.max/2) / c.max)
}
