package wasm

import (
	"context"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// Host imports, module "reprise" (adapter-abi.md §6). Each is a
// GoModuleFunc (no reflection) and finds its module through the call
// context, which every module sets once.

const (
	maxLogMessage = 4096
	logsPerSecond = 100
	importModule  = "reprise"
)

func (a *Adapter) instantiateHost(ctx context.Context) error {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	b := a.rt.NewHostModuleBuilder(importModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostLogEnabled), []api.ValueType{i32}, []api.ValueType{i32}).
		WithParameterNames("level").Export("log_enabled")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").Export("log")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostTokenCount), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("ptr", "len").Export("token_count")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostRandom), nil, []api.ValueType{i64}).
		Export("random_u64")
	_, err := b.Instantiate(ctx)
	return err
}

func instanceOf(ctx context.Context) *module {
	m, _ := ctx.Value(instanceKey{}).(*module)
	return m
}

func hostLogEnabled(ctx context.Context, _ api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in != nil && in.a.log.Enabled(ctx, slog.Level(int32(stack[0]))) {
		stack[0] = 1
	} else {
		stack[0] = 0
	}
}

func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil {
		return
	}
	level := slog.Level(int32(stack[0]))
	if !in.a.log.Enabled(ctx, level) {
		return
	}
	// Budget: logsPerSecond messages per instance per second.
	sec := time.Since(epoch).Nanoseconds() / int64(time.Second)
	if sec != in.logWindow {
		if in.logDrop > 0 {
			in.a.log.LogAttrs(ctx, slog.LevelWarn, "adapter log messages dropped", slog.String("adapter", in.adapterName), slog.Int("dropped", in.logDrop))
		}
		in.logWindow, in.logCount, in.logDrop = sec, 0, 0
	}
	if in.logCount >= logsPerSecond {
		in.logDrop++
		return
	}
	in.logCount++
	n := min(uint32(stack[2]), maxLogMessage)
	b, ok := m.Memory().Read(uint32(stack[1]), n)
	if !ok {
		in.a.log.LogAttrs(ctx, slog.LevelWarn, "adapter log: message outside memory", slog.String("adapter", in.adapterName))
		return
	}
	in.a.log.LogAttrs(ctx, level, string(b), slog.String("adapter", in.adapterName))
}

func hostTokenCount(ctx context.Context, m api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil || in.a.tokens == nil {
		stack[0] = api.EncodeI32(-1)
		return
	}
	b, ok := m.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		stack[0] = api.EncodeI32(-1)
		return
	}
	stack[0] = api.EncodeI32(int32(min(in.a.tokens.Count(string(b)), 1<<31-1)))
}

func hostRandom(ctx context.Context, _ api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil {
		stack[0] = 0
		return
	}
	stack[0] = splitmix64(&in.rng)
}

// splitmix64 advances state and returns the next value (Steele, Lea and
// Flood 2014): deterministic, seedable, 64-bit state.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
