package agentconn

import (
	"context"
	"io"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// TarResult counts what UploadTar extracted.
type TarResult struct {
	Entries int64
	Bytes   int64 // bytes of file contents
}

// UploadTar extracts the tar stream r under dir (created if missing). An
// entry that would land outside dir fails the call with the code
// "tar_path_outside_dir"; entries before it stay extracted.
func (c *Client) UploadTar(ctx context.Context, dir string, r io.Reader) (TarResult, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream := c.files.UploadTar(sctx)
	err := stream.Send(&agentpb.UploadTarRequest{Msg: &agentpb.UploadTarRequest_Header{Header: &agentpb.UploadTarHeader{
		Dir: dir, CreateDir: true,
	}}})
	if err == nil {
		if rerr := sendChunks(r, func(b []byte) error {
			return stream.Send(&agentpb.UploadTarRequest{Msg: &agentpb.UploadTarRequest_Data{Data: b}})
		}); rerr != nil {
			// Abandon the call without closing its send side: a close
			// is the upload's clean end, which the agent could see
			// before the cancellation and commit what it had.
			cancel()
			return TarResult{}, rerr
		}
	}
	res, err := stream.CloseAndReceive()
	if err != nil {
		return TarResult{}, mapError(err)
	}
	return TarResult{Entries: res.Msg.Entries, Bytes: res.Msg.Bytes}, nil
}

// tarReader streams a DownloadTar response.
type tarReader struct {
	stream *connect.ServerStreamForClient[agentpb.DownloadTarResponse]
	cancel context.CancelFunc
	buf    []byte
	err    error
}

// DownloadTar returns a tar stream of path: a directory's contents with
// names relative to it, or a single file under its base name. Errors such
// as "file_not_found" are returned here. The caller must Close the reader.
func (c *Client) DownloadTar(ctx context.Context, path string) (io.ReadCloser, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.files.DownloadTar(sctx, connect.NewRequest(&agentpb.DownloadTarRequest{Path: path}))
	if err != nil {
		cancel()
		return nil, mapError(err)
	}
	r := &tarReader{stream: stream, cancel: cancel}
	// Every tar has at least its trailer, so the first message (or the
	// error) comes at once.
	if !stream.Receive() {
		err := stream.Err()
		r.Close()
		if err == nil {
			return nil, protocolError("download ended without data")
		}
		return nil, mapError(err)
	}
	r.buf = stream.Msg().GetData()
	return r, nil
}

func (r *tarReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if !r.stream.Receive() {
			if err := r.stream.Err(); err != nil {
				r.err = mapError(err)
			} else {
				r.err = io.EOF
			}
			continue
		}
		r.buf = r.stream.Msg().GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *tarReader) Close() error {
	r.cancel()
	_ = r.stream.Close()
	if r.err == nil {
		r.err = io.ErrClosedPipe
	}
	return nil
}
