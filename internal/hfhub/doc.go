// Package hfhub downloads single files from the Hugging Face Hub into the
// cache that the huggingface_hub Python library keeps, so that a cache
// filled by Python tools (transformers, vLLM, `hf download`) is reused and
// what reprise downloads is usable by them.
//
// # The cache
//
// One directory (see [FromEnv]: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub) holds one
// folder per repository, models--ORG--NAME or datasets--ORG--NAME:
//
//	blobs/ETAG                 the file's bytes, named by the Hub's ETag
//	                           (sha256 for LFS files, git blob sha1 else)
//	refs/REVISION              the commit a branch or tag named last
//	snapshots/COMMIT/FILENAME  a relative symlink to ../../blobs/ETAG
//	.no_exist/COMMIT/FILENAME  an empty file: the Hub said it is absent
//
// # Downloads
//
// [Config.Download] answers from the cache when the revision's snapshot
// holds the file (no request at all, also for a branch name: delete
// refs/REVISION to look again), else asks the Hub with a HEAD request on
// {endpoint}/{repo}/resolve/{revision}/{filename}, which names the commit
// (X-Repo-Commit), the ETag (X-Linked-Etag for LFS files, ETag else) and
// the size (X-Linked-Size, Content-Length), then GETs the file (following
// the Hub's redirect to its CDN) into a temporary file beside the blobs. A
// file whose size or hash differs from what the Hub announced is removed,
// never renamed into the cache.
//
// Nothing in this package runs code from a repository.
package hfhub
