// Package hfdataset turns a Hugging Face dataset (a repository, a
// config, a split) into a JSON Lines prompt file that reprise's trace
// reader takes: one row a line, {"prompt": TEXT} (and "session_id" for a
// turn of a multi-turn row).
//
// The dataset's files come from the Hub's Parquet conversion, the branch
// refs/convert/parquet that the Hub writes for every public dataset in
// one layout, CONFIG/SPLIT/0000.parquet, 0001.parquet, … ("default" is
// the config of a dataset without configs). They are downloaded with
// [hfhub.Config.Download] into the huggingface_hub cache
// (datasets--ORG--NAME), so what `hf download` or the datasets library
// fetched is reused. The prompt file is written once per commit, config,
// split and filter into a folder of its own (never inside the Hub cache)
// and reused.
//
// A row is kept when every [Filter] holds: its column's value, written as
// text (numbers in decimal, booleans true/false), equals the filter's.
package hfdataset
