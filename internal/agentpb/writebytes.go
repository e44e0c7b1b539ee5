package agentpb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// Write's byte path. FileService.Write carries a file in protobuf messages
// on an HTTP/2 stream: each byte is copied into the stream's buffer and
// out of the message on the agent's side, inside the sandbox's CPU limit.
// The byte path carries the same write on a connection of its own, so the
// agent can move the data from the socket into the file without looking at
// it (splice):
//
//  1. The client sends an HTTP/1.1 request for WriteBytesPath with
//     "Connection: Upgrade" and "Upgrade: " WriteBytesUpgrade; the agent
//     answers 101 Switching Protocols (an agent without the path answers
//     404, and the client uses Write).
//  2. The client sends frames: a 4-byte big-endian length, then that many
//     bytes. The first frame is the WriteHeader (protobuf), then the data
//     in frames of at most WriteBytesFrameMax bytes, then an empty frame:
//     the upload's clean end. A connection that ends before the empty frame
//     is an abandoned upload, and the agent discards what it wrote.
//  3. The agent answers one frame: WriteBytesOK then the WriteResponse
//     (protobuf), or WriteBytesFailed then a FrameError (JSON), and
//     closes the connection.
const (
	WriteBytesPath    = "/paddock.agent.v1.FileService/WriteBytes"
	WriteBytesUpgrade = "paddock-write-bytes"
)

// WriteBytesFrameMax bounds one frame: the header, the data, the answer.
const WriteBytesFrameMax = 16 << 20

// The first byte of the agent's answer.
const (
	WriteBytesOK     byte = 0
	WriteBytesFailed byte = 1
)

// FrameError is a call refused or failed on a framed path (a byte-path
// write, a framed exec): the Connect code and message the same refusal
// has on the call's Connect procedure, and its ErrorInfo.
type FrameError struct {
	Code    uint32 `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
	Subject string `json:"subject,omitempty"`
}

// ErrFrameTooLarge is a frame longer than WriteBytesFrameMax.
var ErrFrameTooLarge = errors.New("frame too large")

// WriteFrame writes b as one frame, its length and bytes in one call.
func WriteFrame(w io.Writer, b []byte) error {
	if len(b) > WriteBytesFrameMax {
		return ErrFrameTooLarge
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	bufs := net.Buffers{n[:], b}
	_, err := bufs.WriteTo(w)
	return err
}

// ReadFrameLen reads a frame's length. An end of r before any of it is
// io.EOF; within it, io.ErrUnexpectedEOF.
func ReadFrameLen(r io.Reader) (int, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > WriteBytesFrameMax {
		return 0, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, size)
	}
	return int(size), nil
}

// ReadFrame reads a whole frame of at most limit bytes.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	n, err := ReadFrameLen(r)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: %d bytes, at most %d here", ErrFrameTooLarge, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
