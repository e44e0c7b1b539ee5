package computeruse

import (
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"testing"
)

// xwdSpec describes a synthetic XWD dump.
type xwdSpec struct {
	w, h        int
	bpp         int
	bytesPerRow int // 0: packed, padded to 4 bytes
	msbFirst    bool
	leHeader    bool // header and colormap written little-endian
	masks       [3]uint32
	colormap    []xwdColour
	name        string
	format      uint32 // 0: ZPixmap
	version     uint32 // 0: 7
}

type xwdColour struct {
	pixel   uint32
	r, g, b uint16
}

// makeXWD encodes pixels (one value per pixel, row by row) as xwd would.
func makeXWD(s xwdSpec, pixels []uint32) []byte {
	bpl := s.bytesPerRow
	if bpl == 0 {
		bpl = (s.w*s.bpp/8 + 3) &^ 3
	}
	var order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	} = binary.BigEndian
	if s.leHeader {
		order = binary.LittleEndian
	}
	name := s.name + "\x00"
	hdr := make([]uint32, 25)
	hdr[xwdHeaderSize] = uint32(xwdHeaderLen + len(name))
	hdr[xwdFileVersion] = xwdVersion
	if s.version != 0 {
		hdr[xwdFileVersion] = s.version
	}
	hdr[xwdPixmapFormat] = xwdZPixmap
	if s.format != 0 {
		hdr[xwdPixmapFormat] = s.format
	}
	hdr[xwdPixmapDepth] = 24
	hdr[xwdPixmapWidth], hdr[xwdPixmapHeight] = uint32(s.w), uint32(s.h)
	if s.msbFirst {
		hdr[xwdByteOrder] = xwdMSBFirst
	}
	hdr[xwdBitsPerPixel] = uint32(s.bpp)
	hdr[xwdBytesPerLine] = uint32(bpl)
	hdr[xwdVisualClass] = 4 // TrueColor
	hdr[xwdRedMask], hdr[xwdGreenMask], hdr[xwdBlueMask] = s.masks[0], s.masks[1], s.masks[2]
	hdr[xwdNColors] = uint32(len(s.colormap))
	var b []byte
	for _, v := range hdr {
		b = order.AppendUint32(b, v)
	}
	b = append(b, name...)
	for _, c := range s.colormap {
		b = order.AppendUint32(b, c.pixel)
		b = order.AppendUint16(b, c.r)
		b = order.AppendUint16(b, c.g)
		b = order.AppendUint16(b, c.b)
		b = append(b, 7, 0) // flags, pad
	}
	var po binary.ByteOrder = binary.LittleEndian
	if s.msbFirst {
		po = binary.BigEndian
	}
	for y := 0; y < s.h; y++ {
		row := make([]byte, bpl)
		for x := 0; x < s.w; x++ {
			p := pixels[y*s.w+x]
			o := row[x*s.bpp/8:]
			switch s.bpp {
			case 8:
				o[0] = byte(p)
			case 16:
				po.PutUint16(o, uint16(p))
			case 24:
				if s.msbFirst {
					o[0], o[1], o[2] = byte(p>>16), byte(p>>8), byte(p)
				} else {
					o[0], o[1], o[2] = byte(p), byte(p>>8), byte(p>>16)
				}
			case 32:
				po.PutUint32(o, p)
			}
		}
		// Padding bytes hold garbage in real dumps.
		for i := s.w * s.bpp / 8; i < bpl; i++ {
			row[i] = 0xee
		}
		b = append(b, row...)
	}
	return b
}

var rgbMasks = [3]uint32{0xff0000, 0x00ff00, 0x0000ff}

func TestDecodeXWD(t *testing.T) {
	// 3x2: red, green, blue / white, black, a grey.
	want := []color.RGBA{
		{0xff, 0, 0, 0xff}, {0, 0xff, 0, 0xff}, {0, 0, 0xff, 0xff},
		{0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 0xff}, {0x80, 0x40, 0x20, 0xff},
	}
	rgb := func(c color.RGBA) uint32 { return uint32(c.R)<<16 | uint32(c.G)<<8 | uint32(c.B) }
	var px24 []uint32
	for _, c := range want {
		px24 = append(px24, rgb(c))
	}
	// 16-bit 5-6-5: the grey is what 5 and 6 bits keep of it.
	want565 := append([]color.RGBA(nil), want...)
	px565 := make([]uint32, len(want))
	for i, c := range want {
		r5, g6, b5 := uint32(c.R)>>3, uint32(c.G)>>2, uint32(c.B)>>3
		px565[i] = r5<<11 | g6<<5 | b5
		want565[i] = color.RGBA{uint8((r5*255 + 15) / 31), uint8((g6*255 + 31) / 63), uint8((b5*255 + 15) / 31), 0xff}
	}
	// 8-bit through the colormap.
	var cmap []xwdColour
	px8 := make([]uint32, len(want))
	for i, c := range want {
		cmap = append(cmap, xwdColour{uint32(10 + i), uint16(c.R) * 0x101, uint16(c.G) * 0x101, uint16(c.B) * 0x101})
		px8[i] = uint32(10 + i)
	}
	// BGR masks, as some servers have.
	bgr := [3]uint32{0x0000ff, 0x00ff00, 0xff0000}
	pxBGR := make([]uint32, len(want))
	for i, c := range want {
		pxBGR[i] = uint32(c.B)<<16 | uint32(c.G)<<8 | uint32(c.R)
	}

	for _, tc := range []struct {
		name   string
		spec   xwdSpec
		pixels []uint32
		want   []color.RGBA
	}{
		{"32 bpp LSBFirst (Xvfb)", xwdSpec{w: 3, h: 2, bpp: 32, masks: rgbMasks, name: "xwdump"}, px24, want},
		{"32 bpp MSBFirst", xwdSpec{w: 3, h: 2, bpp: 32, msbFirst: true, masks: rgbMasks}, px24, want},
		{"32 bpp, rows padded", xwdSpec{w: 3, h: 2, bpp: 32, bytesPerRow: 20, masks: rgbMasks}, px24, want},
		{"32 bpp, little-endian header", xwdSpec{w: 3, h: 2, bpp: 32, leHeader: true, masks: rgbMasks}, px24, want},
		{"32 bpp BGR masks", xwdSpec{w: 3, h: 2, bpp: 32, masks: bgr}, pxBGR, want},
		{"24 bpp LSBFirst", xwdSpec{w: 3, h: 2, bpp: 24, masks: rgbMasks}, px24, want},
		{"24 bpp MSBFirst", xwdSpec{w: 3, h: 2, bpp: 24, msbFirst: true, masks: rgbMasks}, px24, want},
		{"16 bpp 565", xwdSpec{w: 3, h: 2, bpp: 16, masks: [3]uint32{0xf800, 0x07e0, 0x001f}}, px565, want565},
		{"8 bpp colormap", xwdSpec{w: 3, h: 2, bpp: 8, colormap: cmap}, px8, want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := DecodeXWD(makeXWD(tc.spec, tc.pixels))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds() != image.Rect(0, 0, 3, 2) {
				t.Fatalf("bounds %v", img.Bounds())
			}
			for i, w := range tc.want {
				if got := img.RGBAAt(i%3, i/3); got != w {
					t.Errorf("pixel %d,%d = %v, want %v", i%3, i/3, got, w)
				}
			}
		})
	}
}

func TestDecodeXWDRefuses(t *testing.T) {
	good := makeXWD(xwdSpec{w: 2, h: 2, bpp: 32, masks: rgbMasks}, []uint32{1, 2, 3, 4})
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short header", good[:50]},
		{"wrong version", makeXWD(xwdSpec{w: 2, h: 2, bpp: 32, masks: rgbMasks, version: 6}, []uint32{1, 2, 3, 4})},
		{"XYPixmap", makeXWD(xwdSpec{w: 2, h: 2, bpp: 32, masks: rgbMasks, format: 1}, []uint32{1, 2, 3, 4})},
		{"pixels cut short", good[:len(good)-1]},
		{"no masks", makeXWD(xwdSpec{w: 2, h: 2, bpp: 32}, []uint32{1, 2, 3, 4})},
		{"12 bpp", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[4*xwdBitsPerPixel:], 12)
			return b
		}()},
		{"rows shorter than pixels", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[4*xwdBytesPerLine:], 4)
			return b
		}()},
		{"header size past the end", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[0:], 1<<30)
			return b
		}()},
		{"huge", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[4*xwdPixmapWidth:], 1<<20)
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeXWD(tc.b); !errors.Is(err, ErrXWD) {
				t.Fatalf("got %v, want ErrXWD", err)
			}
		})
	}
}
