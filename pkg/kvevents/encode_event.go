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
		n := 7
		if v.LoRAName != "" {
			n = 8 // lora_name defaults to None, so msgspec omits it when unset
		}
		w.arrayLen(n)
		w.str(TagBlockStored)
		w.storedFields(v)
		if v.LoRAName != "" {
			w.str(v.LoRAName)
		}
	case BlockRemoved:
		w.arrayLen(3)
		w.str(TagBlockRemoved)
		w.hashes(v.BlockHashes)
		w.optStr(v.Medium)
	case AllBlocksCleared:
		w.arrayLen(1)
		w.str(TagAllBlocksCleared)
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
		w.mapLen(3)
		w.str(fieldType)
		w.str(TagBlockRemoved)
		w.str(fieldHashes)
		w.hashes(v.BlockHashes)
		w.str(fieldMedium)
		w.optStr(v.Medium)
	case AllBlocksCleared:
		w.mapLen(1)
		w.str(fieldType)
		w.str(TagAllBlocksCleared)
	}
}

func (w *writer) storedMap(v BlockStored) {
	n := 7
	if v.LoRAName != "" {
		n = 8
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
	if v.LoRAName != "" {
		w.str(fieldLoRAName)
		w.str(v.LoRAName)
	}
}
