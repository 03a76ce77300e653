package kvevents

// eventArray writes e as a tagged msgspec array: [tag, field...].
func (w *writer) eventArray(e Event) {
	e, err := deref(e)
	if err != nil {
		w.do(err)
		return
	}
	switch v := e.(type) {
	case BlockStored:
		w.storedArray(v)
	case BlockRemoved:
		n := 3
		if v.GroupIdx != 0 {
			n = 4
		}
		w.arrayLen(n)
		w.str(TagBlockRemoved)
		w.hashes(v.BlockHashes)
		w.optStr(v.Medium)
		if v.GroupIdx != 0 {
			w.int(v.GroupIdx)
		}
	case AllBlocksCleared:
		w.arrayLen(1)
		w.str(TagAllBlocksCleared)
	}
}

// storedArray writes BlockStored positionally. A cache salt makes it SGLang's
// salted form (8th element a metadata map); otherwise trailing fields left at
// their defaults are omitted, as msgspec does.
func (w *writer) storedArray(v BlockStored) {
	if v.CacheSalt != "" {
		w.arrayLen(8)
		w.str(TagBlockStored)
		w.storedFields(v)
		w.saltMap(v.CacheSalt)
		return
	}
	n := 7
	switch {
	case v.SpecKind != "":
		n = 11
	case v.GroupIdx != 0:
		n = 10
	case v.ExtraKeys != nil || v.LoRAName != "":
		n = 9
	case v.LoRAName != "":
		n = 8
	}
	w.arrayLen(n)
	w.str(TagBlockStored)
	w.storedFields(v)
	tail := []func(){func() { w.optStr(v.LoRAName) }, func() { w.extraKeys(v.ExtraKeys, v.LoRAName, len(v.BlockHashes)) },
		func() { w.int(v.GroupIdx) }, func() { w.optStr(v.SpecKind) }}
	for _, f := range tail[:n-7] {
		f()
	}
}

// storedFields writes BlockStored's required fields in declaration order.
func (w *writer) storedFields(v BlockStored) {
	w.hashes(v.BlockHashes)
	w.optHash(v.Parent)
	w.tokens(v.TokenIDs)
	w.int(v.BlockSize)
	w.optInt(v.LoRAID)
	w.optStr(v.Medium)
}

// saltMap writes SGLang's BlockStored metadata.
func (w *writer) saltMap(salt string) {
	w.mapLen(1)
	w.str(fieldCacheSalt)
	w.str(salt)
}

// extraKeys writes one entry per block: nil for 0, else the one-element tuple
// [digest] (an engine's real keys are salts and multimodal hashes; any value
// stands for them since the picker only compares digests). With an adapter,
// every block's tuple starts with its name, as vLLM hashes LoRA blocks.
func (w *writer) extraKeys(ks []uint64, lora string, blocks int) {
	if ks == nil && lora == "" {
		w.do(w.e.EncodeNil())
		return
	}
	n := len(ks)
	if ks == nil {
		n = blocks
	}
	w.arrayLen(n)
	for i := 0; i < n; i++ {
		var k uint64
		if ks != nil {
			k = ks[i]
		}
		w.blockKeys(k, lora)
	}
}

// blockKeys writes one block's extra_keys entry.
func (w *writer) blockKeys(k uint64, lora string) {
	switch {
	case k == 0 && lora == "":
		w.do(w.e.EncodeNil())
	case lora == "":
		w.arrayLen(1)
		w.uint(k)
	case k == 0:
		w.arrayLen(1)
		w.str(lora)
	default:
		w.arrayLen(2)
		w.str(lora)
		w.uint(k)
	}
}

// eventMap writes e as a msgspec map tagged by "type".
func (w *writer) eventMap(e Event) {
	e, err := deref(e)
	if err != nil {
		w.do(err)
		return
	}
	switch v := e.(type) {
	case BlockStored:
		w.storedMap(v)
	case BlockRemoved:
		n := 3
		if v.GroupIdx != 0 {
			n = 4
		}
		w.mapLen(n)
		w.str(fieldType)
		w.str(TagBlockRemoved)
		w.str(fieldHashes)
		w.hashes(v.BlockHashes)
		w.str(fieldMedium)
		w.optStr(v.Medium)
		if v.GroupIdx != 0 {
			w.str(fieldGroupIdx)
			w.int(v.GroupIdx)
		}
	case AllBlocksCleared:
		w.mapLen(1)
		w.str(fieldType)
		w.str(TagAllBlocksCleared)
	}
}

// storedMap writes BlockStored as current vLLM does: lora_name always (nil
// when unset), extra_keys, group_idx and kv_cache_spec_kind only when set,
// and SGLang's metadata map when there is a cache salt.
func (w *writer) storedMap(v BlockStored) {
	opt := []struct {
		on    bool
		key   string
		write func()
	}{
		{v.ExtraKeys != nil || v.LoRAName != "", fieldExtraKeys, func() { w.extraKeys(v.ExtraKeys, v.LoRAName, len(v.BlockHashes)) }},
		{v.GroupIdx != 0, fieldGroupIdx, func() { w.int(v.GroupIdx) }},
		{v.SpecKind != "", fieldSpecKind, func() { w.str(v.SpecKind) }},
		{v.CacheSalt != "", fieldMetadata, func() { w.saltMap(v.CacheSalt) }},
	}
	n := 8
	for _, o := range opt {
		if o.on {
			n++
		}
	}
	w.mapLen(n)
	w.str(fieldType)
	w.str(TagBlockStored)
	w.str(fieldHashes)
	w.hashes(v.BlockHashes)
	w.str(fieldParent)
	w.optHash(v.Parent)
	w.str(fieldTokenIDs)
	w.tokens(v.TokenIDs)
	w.str(fieldBlockSize)
	w.int(v.BlockSize)
	w.str(fieldLoRAID)
	w.optInt(v.LoRAID)
	w.str(fieldMedium)
	w.optStr(v.Medium)
	w.str(fieldLoRAName)
	w.optStr(v.LoRAName)
	for _, o := range opt {
		if o.on {
			w.str(o.key)
			o.write()
		}
	}
}
