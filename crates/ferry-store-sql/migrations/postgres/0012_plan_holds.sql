-- A write batch's statement ends with `ferry_plan_holds(counts match the plan)`. When they
-- do not (another process created one of the batch's tasks, or moved one on, since the plan
-- was made), this raises, and the statement fails whole: a statement run as its own
-- transaction (a batch of new tasks, written without taking locks first) then leaves
-- nothing behind, and the writer plans the batch again under row locks. The SQLSTATE is
-- ferry's own, so that no other error is taken for it.
CREATE FUNCTION ferry_plan_holds(holds boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT holds THEN
        RAISE EXCEPTION 'the write batch no longer matches the rows it planned for'
            USING ERRCODE = 'FYPLN';
    END IF;
    RETURN true;
END
$$;
