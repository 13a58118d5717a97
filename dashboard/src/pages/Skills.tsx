import { PageHeader } from '../components/ui';

export function Skills() {
  return <PageHeader title="Skills" />;
}
